# Denial-of-service limits (docs/security.md): 1,000 connections held against an
# OSD and a monitor, forged PG ids and epochs; tests/test_security_dos.sh and
# its attacker tests/dos_peer.c. Ports 39100-39299.
if(TARGET weft-mon AND TARGET weft-osd AND TARGET thrash_io AND TARGET test_recovery_io)
	add_executable(dos_peer ${CMAKE_CURRENT_LIST_DIR}/dos_peer.c)
	target_link_libraries(dos_peer PRIVATE weft_fabric weft_proto weft_common)
	set(_port 39100)
	foreach(_case conns msgs)
		add_test(NAME security_dos_${_case}
			COMMAND ${CMAKE_CURRENT_LIST_DIR}/test_security_dos.sh ${_case} ${_port}
				${CMAKE_BINARY_DIR})
		set_tests_properties(security_dos_${_case} PROPERTIES LABELS "func;security"
			TIMEOUT 480 SKIP_RETURN_CODE 77)
		math(EXPR _port "${_port} + 100")
	endforeach()
endif()
