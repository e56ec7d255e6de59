# Deployment (issue 19): the cluster on three network-namespace "hosts" run
# from the installed tree (tests/test_multihost.sh, ports 34000-34199 inside
# the namespaces), the peer that requires an unknown feature, and the
# three-VM verbs cluster (verbs-tests/multivm.sh, ports 34300-34399 inside
# the VMs).
if(TARGET weft-osd AND TARGET weft_client)
	add_executable(hello_peer ${CMAKE_CURRENT_LIST_DIR}/hello_peer.c)
	target_link_libraries(hello_peer PRIVATE weft_msgr weft_fabric weft_proto weft_common)
	add_test(NAME multihost_netns
		COMMAND ${CMAKE_CURRENT_LIST_DIR}/test_multihost.sh ${CMAKE_BINARY_DIR} 34000
			$<TARGET_FILE:hello_peer> $<TARGET_FILE:test_osd_io> $<TARGET_FILE:test_vol_io>)
	# the install step reads the whole build: run after everything is built
	set_tests_properties(multihost_netns PROPERTIES LABELS "func;multihost" TIMEOUT 600
		SKIP_RETURN_CODE 77)
endif()

# Three qemu VMs on a bridge, Soft-RoCE in each, a mon and an OSD per VM over
# verbs, the object case from a client in the first: rdma_cm between hosts.
# About 80 s on a quiet 2-core host (TCG); the script stops at 900 s. It
# shares the rdma_vm lock with the single-VM verbs tests (one set of VMs at
# a time on a 2-core runner).
if(WEFT_WITH_VERBS AND TARGET weft-osd AND TARGET test_osd_io)
	add_test(NAME multivm_verbs
		COMMAND ${PROJECT_SOURCE_DIR}/verbs-tests/multivm.sh ${CMAKE_BINARY_DIR} 34300)
	set_tests_properties(multivm_verbs PROPERTIES LABELS "verbs;multihost" TIMEOUT 1000
		SKIP_RETURN_CODE 77 RESOURCE_LOCK rdma_vm)
endif()

# The Debian packages: build, lintian, install, a cluster from the installed
# layout as the weft user (tests/test_packages.sh; ports 34200-34299). It
# installs and purges packages on this machine: one at a time (RESOURCE_LOCK).
add_test(NAME packages_deb
	COMMAND ${CMAKE_CURRENT_LIST_DIR}/test_packages.sh ${PROJECT_SOURCE_DIR} 34200)
set_tests_properties(packages_deb PROPERTIES LABELS "func;package" TIMEOUT 900
	SKIP_RETURN_CODE 77 RESOURCE_LOCK dpkg RUN_SERIAL TRUE) # its compile takes every core
