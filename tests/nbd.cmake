# nbdkit-weft-plugin (client/nbd/): the real nbdkit serving a volume to fio's
# nbd engine, nbdinfo, qemu-img and qemu-io, against 1 weft-mon + 3 weft-osd
# (tests/test_nbd.sh), and a qemu VM whose second disk is a Weft volume while
# an OSD is killed (tests/test_nbd_vm.sh). Ports 32000-32499. Cases skip (77)
# with a message when nbdkit, fio, qemu-img or the VM harness is missing.
if(TARGET nbdkit-weft-plugin AND TARGET weft-osd)
	add_executable(nbd_vol_copies ${CMAKE_CURRENT_LIST_DIR}/nbd_vol_copies.c)
	target_link_libraries(nbd_vol_copies PRIVATE weft_client)
	function(weft_nbd_test case port timeout)
		add_test(NAME nbd_${case}
			COMMAND ${CMAKE_CURRENT_LIST_DIR}/test_nbd.sh ${case} ${port}
				$<TARGET_FILE:weft-mon> $<TARGET_FILE:weft-osd> $<TARGET_FILE:weft>
				$<TARGET_FILE:nbdkit-weft-plugin> $<TARGET_FILE:nbd_vol_copies>)
		set_tests_properties(nbd_${case} PROPERTIES LABELS "func" TIMEOUT ${timeout}
			SKIP_RETURN_CODE 77)
	endfunction()
	weft_nbd_test(args 32000 120)
	weft_nbd_test(fio 32100 600)
	weft_nbd_test(qemu 32200 600)
	weft_nbd_test(flush 32300 600)
	# The VM boot (TCG: no KVM here) with a virtio disk on the plugin; one VM at a
	# time on this machine, like the verbs VM tests (tests/osd.cmake).
	add_test(NAME nbd_vm
		COMMAND ${CMAKE_CURRENT_LIST_DIR}/test_nbd_vm.sh 32400
			$<TARGET_FILE:weft-mon> $<TARGET_FILE:weft-osd> $<TARGET_FILE:weft>
			$<TARGET_FILE:nbdkit-weft-plugin>)
	set_tests_properties(nbd_vm PROPERTIES LABELS "vm" TIMEOUT 900 SKIP_RETURN_CODE 77
		RESOURCE_LOCK rdma_vm)
endif()
