# Capacity on the OSD side (docs/capacity.md): full stores, refused writes,
# no divergence, space given back. tests/test_capacity_osd.sh, ports 36000-36999.
if(TARGET weft-osd AND TARGET test_recovery_io)
	function(weft_capacity_osd_test case port timeout)
		add_test(NAME osd_capacity_${case}
			COMMAND ${CMAKE_CURRENT_LIST_DIR}/test_capacity_osd.sh ${case} tcp ${port}
				$<TARGET_FILE:weft-mon> $<TARGET_FILE:weft-osd> $<TARGET_FILE:weft>
				$<TARGET_FILE:test_recovery_io>)
		set_tests_properties(osd_capacity_${case} PROPERTIES LABELS "func;capacity"
			TIMEOUT ${timeout} SKIP_RETURN_CODE 77)
	endfunction()
	weft_capacity_osd_test(small 36000 600)
	weft_capacity_osd_test(purge 36100 600)
	weft_capacity_osd_test(full 36400 600)
	weft_capacity_osd_test(toofull 36500 600)
	weft_capacity_osd_test(quota 36600 600)
endif()
# README command 1 on small stores: the write phase's byte cap keeps them from filling.
if(TARGET weft-osd AND TARGET weft)
	add_test(NAME demo_capacity
		COMMAND ${CMAKE_CURRENT_LIST_DIR}/test_demo_capacity.sh ${CMAKE_BINARY_DIR} 36300)
	set_tests_properties(demo_capacity PROPERTIES LABELS "func;capacity" TIMEOUT 600)
endif()
