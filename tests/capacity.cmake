# Capacity (docs/capacity.md): weft df / osd df against known data, the full
# ratios (set, validated, the OSDs' fullness bits and health codes), pool
# quotas (POOL_QUOTA, the pool's full flag set and cleared). Ports 31000-31099.
if(TARGET weft-osd AND TARGET weft_client)
	add_executable(capacity_io ${CMAKE_CURRENT_LIST_DIR}/capacity_io.c)
	target_link_libraries(capacity_io PRIVATE weft_client)
	add_test(NAME capacity_func_df_ratios_quota
		COMMAND ${CMAKE_CURRENT_LIST_DIR}/test_capacity.sh monitor tcp 31000
			$<TARGET_FILE:weft-mon> $<TARGET_FILE:weft-osd> $<TARGET_FILE:weft>
			$<TARGET_FILE:capacity_io>)
	set_tests_properties(capacity_func_df_ratios_quota PROPERTIES LABELS "func;capacity"
		TIMEOUT 600 SKIP_RETURN_CODE 77)
	# filled until refused: needs the OSDs' enforcement (skips without it). Ports 31200-31299.
	add_test(NAME capacity_func_fill
		COMMAND ${CMAKE_CURRENT_LIST_DIR}/test_capacity.sh fill tcp 31200
			$<TARGET_FILE:weft-mon> $<TARGET_FILE:weft-osd> $<TARGET_FILE:weft>
			$<TARGET_FILE:capacity_io>)
	set_tests_properties(capacity_func_fill PROPERTIES LABELS "func;capacity"
		TIMEOUT 600 SKIP_RETURN_CODE 77)
endif()
# The monitors' rules against fake OSDs whose reported space the test sets
# (tests/test_mon_fakeosd.c --usage-file): exact max avail and VAR, the
# hysteresis, conf ratios, a restart without reports. Ports 31100-31199.
if(TARGET weft-fake-osd)
	add_test(NAME capacity_func_mon_rules
		COMMAND ${CMAKE_CURRENT_LIST_DIR}/test_capacity.sh fake tcp 31100
			$<TARGET_FILE:weft-mon> $<TARGET_FILE:weft-fake-osd> $<TARGET_FILE:weft> -)
	set_tests_properties(capacity_func_mon_rules PROPERTIES LABELS "func;capacity"
		TIMEOUT 300 SKIP_RETURN_CODE 77)
endif()
