# weft_add_test(NAME SOURCES src... LIBS lib... LABELS label... [TIMEOUT s] [ARGS a...])
# One executable, one ctest entry. Exit code 77 means "skipped" (missing
# hardware or privileges), never "passed".
function(weft_add_test name)
	cmake_parse_arguments(T "" "TIMEOUT" "SOURCES;LIBS;LABELS;ARGS" ${ARGN})
	add_executable(${name} ${T_SOURCES})
	target_link_libraries(${name} PRIVATE ${T_LIBS} PkgConfig::CMOCKA)
	add_test(NAME ${name} COMMAND ${name} ${T_ARGS})
	if(NOT T_TIMEOUT)
		set(T_TIMEOUT 120)
	endif()
	set_tests_properties(${name} PROPERTIES LABELS "${T_LABELS}" TIMEOUT ${T_TIMEOUT}
		SKIP_RETURN_CODE 77)
endfunction()
