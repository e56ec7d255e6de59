# Monitors (mon/, msgr/): map and message codecs, the messenger's
# rendezvous, the decoder fuzz target, and functional tests that run real
# weft-mon processes and fake OSDs on 127.1.0.x loopback addresses.
if(TARGET weft-mon)
	weft_add_test(test_mon_map
		SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_mon_map.c
		LIBS weft_monmap weft_proto weft_common
		LABELS unit)
	weft_add_test(test_msgr
		SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_msgr.c
		LIBS weft_msgr weft_fabric weft_proto weft_common
		LABELS unit)
	# The TICKET handshake on the messenger (an OSD's connections).
	weft_add_test(test_msgr_ticket
		SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_msgr_ticket.c
		LIBS weft_msgr weft_fabric weft_auth weft_proto weft_common
		LABELS unit)
	# The mon client's own clock: the next deadline, and an owner that runs it
	# only then (a one-shot timer, as weft-osd and libweft) against a fake mon.
	weft_add_test(test_monc
		SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_monc.c
		LIBS weft_monc weft_msgr weft_fabric weft_proto weft_common
		LABELS unit)
	# The messenger's denial-of-service limits and connection pausing (TCP).
	weft_add_test(test_msgr_limits
		SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_msgr_limits.c
		LIBS weft_msgr weft_fabric weft_proto weft_common
		LABELS "unit;security")
	# Connection hello (proto/hello.h): the verdict, and refusals on both sides.
	weft_add_test(test_hello
		SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_hello.c
		LIBS weft_msgr weft_fabric weft_proto weft_common
		LABELS unit)
	if(WEFT_WITH_UCX)
		# The same checks over UCX (tests/test_msgr.c: listening on 127.1.0.1).
		add_test(NAME test_msgr_ucx COMMAND test_msgr ucx)
		set_tests_properties(test_msgr_ucx PROPERTIES LABELS unit TIMEOUT 120
			SKIP_RETURN_CODE 77 ENVIRONMENT
			"UCX_TLS=tcp;UCX_MEM_MALLOC_HOOKS=no;UCX_MEM_MMAP_HOOK_MODE=none;UCX_WARN_UNUSED_ENV_VARS=n")
	endif()

	add_executable(weft-fake-osd ${CMAKE_CURRENT_LIST_DIR}/test_mon_fakeosd.c)
	target_link_libraries(weft-fake-osd PRIVATE weft_monc)

	# Decoder fuzz target for the map, increments and mon messages; the
	# replay runs over the committed corpus and over freshly generated seeds.
	add_executable(mon-corpus-gen ${CMAKE_CURRENT_LIST_DIR}/fuzz/mon_corpus_gen.c)
	target_link_libraries(mon-corpus-gen PRIVATE weft_monmap weft_proto weft_common)
	add_executable(fuzz_mon_replay ${CMAKE_CURRENT_LIST_DIR}/fuzz/fuzz_mon.c
		${CMAKE_CURRENT_LIST_DIR}/fuzz/fuzz_replay.c)
	target_link_libraries(fuzz_mon_replay PRIVATE weft_monmap weft_proto weft_common)
	add_test(NAME mon_corpus_replay
		COMMAND fuzz_mon_replay ${CMAKE_CURRENT_LIST_DIR}/corpus/mon)
	add_test(NAME mon_corpus_gen
		COMMAND sh -c "rm -rf corpus-mon && $<TARGET_FILE:mon-corpus-gen> corpus-mon \
&& $<TARGET_FILE:fuzz_mon_replay> corpus-mon")
	set_tests_properties(mon_corpus_replay mon_corpus_gen PROPERTIES LABELS unit TIMEOUT 120)
	if(WEFT_FUZZ AND CMAKE_C_COMPILER_ID MATCHES "Clang")
		add_executable(fuzz_mon ${CMAKE_CURRENT_LIST_DIR}/fuzz/fuzz_mon.c)
		target_compile_options(fuzz_mon PRIVATE -fsanitize=fuzzer)
		target_link_options(fuzz_mon PRIVATE -fsanitize=fuzzer)
		target_link_libraries(fuzz_mon PRIVATE weft_monmap weft_proto weft_common)
	endif()

	# Functional: each case owns a port range so cases may run in parallel.
	foreach(case quorum restart osd)
		add_test(NAME mon_func_${case}
			COMMAND ${CMAKE_CURRENT_LIST_DIR}/test_mon_cluster.sh ${case}
				$<TARGET_FILE:weft-mon> $<TARGET_FILE:weft>
				$<TARGET_FILE:weft-fake-osd>)
		set_tests_properties(mon_func_${case} PROPERTIES LABELS func TIMEOUT 300
			SKIP_RETURN_CODE 77)
	endforeach()
endif()
