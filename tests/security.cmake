# The security suite (docs/security.md, issue 17): attacks on a real cluster
# on loopback by tests/auth_peer.c (the wire, frame by frame) and the CLI;
# tests/test_security.sh, ports 39400-39799.
if(TARGET weft-mon AND TARGET weft-osd AND TARGET weft_client)
	add_executable(auth_peer ${CMAKE_CURRENT_LIST_DIR}/auth_peer.c)
	target_link_libraries(auth_peer PRIVATE weft_auth weft_fabric weft_proto weft_common)
	set(_port 39400)
	foreach(_case handshake caps insecure osd)
		add_test(NAME security_${_case}
			COMMAND ${CMAKE_CURRENT_LIST_DIR}/test_security.sh ${_case} ${_port}
				${CMAKE_BINARY_DIR})
		set_tests_properties(security_${_case} PROPERTIES LABELS "func;security"
			TIMEOUT 480 SKIP_RETURN_CODE 77)
		math(EXPR _port "${_port} + 100")
	endforeach()
endif()
