# The fabric suite, one ctest per backend, same binary, same checks.
add_library(fabric_harness STATIC fabric_harness.c)
target_link_libraries(fabric_harness PUBLIC weft_fabric weft_common)

weft_add_test(test_fabric_tcp SOURCES test_fabric.c LIBS fabric_harness ARGS tcp
	LABELS "unit;fabric" TIMEOUT 300)
# The TCP backend's own wire, attacked by a raw-socket peer.
weft_add_test(test_fabric_tcp_wire SOURCES test_fabric_tcp_wire.c LIBS fabric_harness
	LABELS "unit;fabric" TIMEOUT 120)
