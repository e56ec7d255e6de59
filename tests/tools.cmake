# tools/: the weft CLI.
# Functional: real fabric-bench server + client processes on 127.0.0.1.
add_test(NAME fabric_bench_func
	COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/test_fabric_bench.sh $<TARGET_FILE:weft>)
set_tests_properties(fabric_bench_func PROPERTIES LABELS "func" TIMEOUT 300)

# Unit: the control-message codec and the data pattern, fed garbage.
weft_add_test(test_fabric_bench_proto
	SOURCES test_fabric_bench_proto.c ${CMAKE_SOURCE_DIR}/tools/fabric_bench_proto.c
	LIBS weft_fabric weft_common
	LABELS unit)

# weft bench: the object format and metadata codec (unit), its command line
# without a cluster (func), and against a real cluster in
# tests/test_osd_cluster.sh (cases benchtool and corrupt, tests/osd.cmake).
weft_add_test(test_bench_obj
	SOURCES test_bench_obj.c ${CMAKE_SOURCE_DIR}/tools/bench_obj.c
	LIBS weft_common
	LABELS unit)
add_test(NAME bench_args
	COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/test_bench_args.sh $<TARGET_FILE:weft>)
set_tests_properties(bench_args PROPERTIES LABELS "func" TIMEOUT 120)
