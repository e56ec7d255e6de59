# Volumes (client/volume*.c, weft vol): functional tests on 1 weft-mon and
# 3 weft-osd processes (tests/test_vol_cluster.sh); ports 22300-22499 (and the mon raft port, +1000).
# Unit: the header, lock and directory encodings.
weft_add_test(test_vol_fmt SOURCES test_vol_fmt.c LIBS weft_client LABELS unit)

if(TARGET weft-osd AND TARGET weft_client)
	add_executable(test_vol_io ${CMAKE_CURRENT_LIST_DIR}/test_vol_io.c)
	target_link_libraries(test_vol_io PRIVATE weft_client)

	function(weft_vol_func_test case port)
		add_test(NAME vol_func_${case}
			COMMAND ${CMAKE_CURRENT_LIST_DIR}/test_vol_cluster.sh ${case} ${port}
				$<TARGET_FILE:weft-mon> $<TARGET_FILE:weft-osd> $<TARGET_FILE:weft>
				$<TARGET_FILE:test_vol_io>)
		set_tests_properties(vol_func_${case} PROPERTIES LABELS func TIMEOUT 600
			SKIP_RETURN_CODE 77)
	endfunction()
	weft_vol_func_test(io 22300)
	weft_vol_func_test(cli 22400)
endif()

# Fencing a broken exclusive lock by blocklisting the old holder's client
# instance (tests/test_fence.sh, docs/volumes.md "Exclusive lock"). Ports 39000-39099.
if(TARGET weft-osd AND TARGET weft_client)
	add_executable(fence_io ${CMAKE_CURRENT_LIST_DIR}/fence_io.c)
	target_link_libraries(fence_io PRIVATE weft_client)
	add_test(NAME vol_func_fence
		COMMAND ${CMAKE_CURRENT_LIST_DIR}/test_fence.sh 39000
			$<TARGET_FILE:weft-mon> $<TARGET_FILE:weft-osd> $<TARGET_FILE:weft>
			$<TARGET_FILE:fence_io>)
	set_tests_properties(vol_func_fence PROPERTIES LABELS "func;vol" TIMEOUT 300
		SKIP_RETURN_CODE 77)
endif()
