# Health codes, mutes, no false alarms, client I/O rates (tests/test_health.sh,
# docs/mon.md "Health checks"), each on a small real cluster on loopback;
# ports 38000-38499.
if(TARGET weft-osd)
	function(weft_health_test case port)
		add_test(NAME health_${case}
			COMMAND ${CMAKE_CURRENT_LIST_DIR}/test_health.sh ${case} ${port}
				$<TARGET_FILE:weft-mon> $<TARGET_FILE:weft-osd> $<TARGET_FILE:weft>)
		set_tests_properties(health_${case} PROPERTIES LABELS "func;health" TIMEOUT 300
			SKIP_RETURN_CODE 77)
	endfunction()
	weft_health_test(codes 38000)
	weft_health_test(flap 38100)
	weft_health_test(leader 38200)
	weft_health_test(io 38300)
endif()
