# Unit tests of common/: log, status codes, crc32c, histograms, conf.
set(WEFT_COMMON_TEST_ROOT ${CMAKE_CURRENT_LIST_DIR}/..)

weft_add_test(test_log SOURCES ${WEFT_COMMON_TEST_ROOT}/tests/test_log.c
	LIBS weft_common LABELS unit)
weft_add_test(test_status SOURCES ${WEFT_COMMON_TEST_ROOT}/tests/test_status.c
	LIBS weft_common LABELS unit)
weft_add_test(test_crc32c SOURCES ${WEFT_COMMON_TEST_ROOT}/tests/test_crc32c.c
	LIBS weft_common LABELS unit)
weft_add_test(test_histogram SOURCES ${WEFT_COMMON_TEST_ROOT}/tests/test_histogram.c
	LIBS weft_common LABELS unit)
weft_add_test(test_conf SOURCES ${WEFT_COMMON_TEST_ROOT}/tests/test_conf.c
	LIBS weft_common LABELS unit)
# test_conf also loads conf/weft.conf.example and conf/local.conf.
get_filename_component(_weft_src ${WEFT_COMMON_TEST_ROOT} ABSOLUTE)
target_compile_definitions(test_conf PRIVATE WEFT_SOURCE_DIR="${_weft_src}")

# docs/configuration.md is the output of 'weft config help --markdown'; fail on drift.
# Regenerate with: build/tools/weft config help --markdown > docs/configuration.md
if(TARGET weft)
	add_test(NAME conf_doc_drift COMMAND sh -c
		"\"$1\" config help --markdown | diff -u \"$2\" - || { echo 'docs/configuration.md is stale: run weft config help --markdown > docs/configuration.md' >&2; exit 1; }"
		sh $<TARGET_FILE:weft> ${_weft_src}/docs/configuration.md)
	set_tests_properties(conf_doc_drift PROPERTIES LABELS unit)
endif()
