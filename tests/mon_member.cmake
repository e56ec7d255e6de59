# Monitor membership online (tests/test_mon_member.sh, docs/mon.md "Membership"):
# 3 -> 5 -> 3 mons under a libweft writer, the leader removed, restarts; ports 37500-37599.
if(TARGET weft-osd AND TARGET test_recovery_io)
	add_test(NAME mon_func_member
		COMMAND ${CMAKE_CURRENT_LIST_DIR}/test_mon_member.sh 37500
			$<TARGET_FILE:weft-mon> $<TARGET_FILE:weft-osd> $<TARGET_FILE:weft>
			$<TARGET_FILE:test_recovery_io>)
	set_tests_properties(mon_func_member PROPERTIES LABELS "func;mon" TIMEOUT 200
		SKIP_RETURN_CODE 77)
endif()
