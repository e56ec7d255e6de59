# The OSD lifecycle (tests/test_osdlife.sh, docs/operations.md): reweight,
# rm, purge, safe-to-destroy, ok-to-stop and the flags on a real local
# cluster; ports 37000-37499.
if(TARGET weft-osd AND TARGET test_recovery_io)
	function(weft_osdlife_test case port)
		add_test(NAME osdlife_${case}
			COMMAND ${CMAKE_CURRENT_LIST_DIR}/test_osdlife.sh ${case} ${port}
				$<TARGET_FILE:weft-mon> $<TARGET_FILE:weft-osd> $<TARGET_FILE:weft>
				$<TARGET_FILE:test_recovery_io>)
		set_tests_properties(osdlife_${case} PROPERTIES LABELS "func;osdlife" TIMEOUT 180
			SKIP_RETURN_CODE 77)
	endfunction()
	weft_osdlife_test(life 37000)
	weft_osdlife_test(flags 37100)
endif()
