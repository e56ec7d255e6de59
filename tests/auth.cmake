# Authentication (auth/): keys, keyrings, entities, caps; the handshake and
# tickets; the decoders' fuzz target and the replay of its seed corpus.
weft_add_test(test_auth_keys
	SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_auth_keys.c
	LIBS weft_auth weft_proto weft_common
	LABELS unit)
