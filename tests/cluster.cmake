# scripts/cluster.sh, the local cluster launcher (docs/cluster.md): a real
# cluster of 3 weft-mon and 3 weft-osd processes brought up, used, restarted
# and taken down through the script; ports 21100-21199.
if(TARGET weft-osd AND TARGET test_osd_io)
	add_test(NAME cluster_launcher
		COMMAND ${CMAKE_CURRENT_LIST_DIR}/test_cluster_launcher.sh ${CMAKE_BINARY_DIR}
			$<TARGET_FILE:test_osd_io>)
	set_tests_properties(cluster_launcher PROPERTIES LABELS func TIMEOUT 300
		SKIP_RETURN_CODE 77)
endif()
