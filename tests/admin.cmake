# Admin socket (admin/): a real UNIX socket, every command, malformed input.
weft_add_test(test_asok SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_asok.c
	LIBS weft_admin weft_common LABELS unit)
