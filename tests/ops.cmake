# Day-two operations (tests/test_ops.sh, docs/operations.md): the CLI
# convention, guard rails, log reopening, Prometheus metrics, each on a small
# real cluster on loopback; ports 35000-35999.
if(TARGET weft-osd AND TARGET weft-mount)
	function(weft_ops_test case port label)
		add_test(NAME ops_${case}
			COMMAND ${CMAKE_CURRENT_LIST_DIR}/test_ops.sh ${case} ${port}
				$<TARGET_FILE:weft-mon> $<TARGET_FILE:weft-osd> $<TARGET_FILE:weft>
				$<TARGET_FILE:weft-mount>)
		set_tests_properties(ops_${case} PROPERTIES LABELS "func;${label}" TIMEOUT 600
			SKIP_RETURN_CODE 77)
	endfunction()
	weft_ops_test(cli 35000 cli)
	weft_ops_test(guard 35100 cli)
	weft_ops_test(sighup 35200 log)
	weft_ops_test(metrics 35300 metrics)
endif()
