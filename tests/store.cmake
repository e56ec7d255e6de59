# osd/store: the object store. Unit tests per module, API tests, WAL damage, crash consistency.
weft_add_test(test_store_units SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_store_units.c
	LIBS weft_store LABELS unit)
weft_add_test(test_store_api SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_store_api.c
	LIBS weft_store LABELS unit TIMEOUT 300)
weft_add_test(test_store_wal SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_store_wal.c
	LIBS weft_store LABELS unit TIMEOUT 300)
# 200 SIGKILL/remount cycles (about 1.5 minutes under ASan); the long run is
# WEFT_STORE_CRASH_CYCLES=5000 tests/test_store_crash (docs/store.md).
weft_add_test(test_store_crash SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_store_crash.c
	LIBS weft_store LABELS func TIMEOUT 900 ARGS --cycles 200)
# Device probe and OSD label (weft osd create/activate), newer layouts refused.
weft_add_test(test_store_label SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_store_label.c
	LIBS weft_store LABELS unit)
# Reads that do not block the OSD's reactor (store_read_start): same bytes as store_read.
weft_add_test(test_store_aread SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_store_aread.c
	LIBS weft_store LABELS unit)
