# verbs backend tests. The host has no RDMA device, so the fabric suite runs
# on verbs inside a Soft-RoCE VM (../shared/rdma-vm) booted by
# verbs-tests/run-vm.sh; it builds the VM cache on first use and skips (77)
# only when qemu or the harness is missing. The two VM tests share one lock
# so they never boot two VMs at once on a 2-core runner.
set(WEFT_VERBS_TESTS ${CMAKE_SOURCE_DIR}/verbs-tests)
if(WEFT_WITH_VERBS)
	# Scoped keys against a peer that skips the initiator's check; run by the
	# suite inside the VM (it needs a device), so built here, not a ctest.
	add_executable(test_verbs_mw test_verbs_mw.c)
	target_link_libraries(test_verbs_mw PRIVATE fabric_harness PkgConfig::CMOCKA)
	# A stalled QP fails its connection instead of hanging it; in the VM too.
	add_executable(test_verbs_stall test_verbs_stall.c)
	target_link_libraries(test_verbs_stall PRIVATE fabric_harness PkgConfig::CMOCKA)
	add_test(NAME verbs_vm_suite
		COMMAND ${WEFT_VERBS_TESTS}/run-vm.sh suite ${CMAKE_BINARY_DIR})
	add_test(NAME verbs_vm_doctor
		COMMAND ${WEFT_VERBS_TESTS}/run-vm.sh doctor ${CMAKE_BINARY_DIR})
	set_tests_properties(verbs_vm_suite verbs_vm_doctor PROPERTIES
		LABELS "verbs;fabric" SKIP_RETURN_CODE 77 RESOURCE_LOCK rdma_vm
		REQUIRED_FILES "${CMAKE_BINARY_DIR}/tests/test_fabric_tcp;${CMAKE_BINARY_DIR}/tests/test_verbs_mw;${CMAKE_BINARY_DIR}/tests/test_verbs_stall;${CMAKE_BINARY_DIR}/tools/weft")
	set_tests_properties(verbs_vm_suite PROPERTIES TIMEOUT 1200)
	set_tests_properties(verbs_vm_doctor PROPERTIES TIMEOUT 600)
endif()
# weft doctor on the host: no RDMA device -> exit 3 (TCP fallback).
add_test(NAME doctor_host COMMAND ${WEFT_VERBS_TESTS}/doctor-host.sh $<TARGET_FILE:weft>)
set_tests_properties(doctor_host PROPERTIES LABELS "unit;tools" TIMEOUT 60)
