# weft-mount (client/mount/): argument handling without a cluster, then fio,
# ext4 on a loop device and mount/unmount behaviour against a real 1 mon +
# 3 OSD cluster, driven by tests/test_mount.sh. The cluster cases need root
# and /dev/fuse and skip (77) with a message without them.
if(TARGET weft-mount)
	function(weft_mount_test case port)
		add_test(NAME mount_${case}
			COMMAND ${CMAKE_CURRENT_LIST_DIR}/test_mount.sh ${case} ${port}
				$<TARGET_FILE:weft-mon> $<TARGET_FILE:weft-osd> $<TARGET_FILE:weft>
				$<TARGET_FILE:weft-mount>)
		set_tests_properties(mount_${case} PROPERTIES LABELS "func" TIMEOUT 600
			SKIP_RETURN_CODE 77)
	endfunction()
	# one port range per case (PORT .. PORT+90) so they may run in parallel
	# (the mon's raft port is PORT + 1000)
	weft_mount_test(args 24100)
	weft_mount_test(fio 24200)
	weft_mount_test(ext4 24300)
	weft_mount_test(lifecycle 24400)
	weft_mount_test(postgres 24500)
endif()
