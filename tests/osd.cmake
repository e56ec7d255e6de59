# OSD daemon and libweft (osd/, client/): functional tests with one real
# weft-mon and three weft-osd processes on loopback (public 127.1.0.x,
# cluster 127.2.0.x), driven by tests/test_osd_cluster.sh.
if(TARGET weft-osd AND TARGET weft_client)
	add_executable(test_osd_io ${CMAKE_CURRENT_LIST_DIR}/test_osd_io.c)
	target_link_libraries(test_osd_io PRIVATE weft_client m)

	# One port range per case so cases may run in parallel; ms_type is the
	# fabric backend (the ucx/verbs variants skip with 77 when it can't open).
	function(weft_osd_func_test case ms_type label port)
		add_test(NAME osd_func_${case}_${ms_type}
			COMMAND ${CMAKE_CURRENT_LIST_DIR}/test_osd_cluster.sh ${case} ${ms_type} ${port}
				$<TARGET_FILE:weft-mon> $<TARGET_FILE:weft-osd> $<TARGET_FILE:weft>
				$<TARGET_FILE:test_osd_io>)
		set_tests_properties(osd_func_${case}_${ms_type} PROPERTIES LABELS "${label}"
			TIMEOUT 600 SKIP_RETURN_CODE 77)
	endfunction()
	weft_osd_func_test(io tcp func 17100)
	weft_osd_func_test(stale tcp func 17200)
	weft_osd_func_test(minsize tcp func 17300)
	weft_osd_func_test(io ucx func 17400)
	weft_osd_func_test(io verbs verbs 17500)
endif()
