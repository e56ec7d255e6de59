# Deployment (issue 19): the cluster on three network-namespace "hosts" run
# from the installed tree (tests/test_multihost.sh, ports 34000-34199 inside
# the namespaces), and the peer that requires an unknown feature.
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

# The Debian packages: build, lintian, install, a cluster from the installed
# layout as the weft user (tests/test_packages.sh; ports 34200-34299). It
# installs and purges packages on this machine: one at a time (RESOURCE_LOCK).
add_test(NAME packages_deb
	COMMAND ${CMAKE_CURRENT_LIST_DIR}/test_packages.sh ${PROJECT_SOURCE_DIR} 34200)
set_tests_properties(packages_deb PROPERTIES LABELS "func;package" TIMEOUT 900
	SKIP_RETURN_CODE 77 RESOURCE_LOCK dpkg RUN_SERIAL TRUE) # its compile takes every core
