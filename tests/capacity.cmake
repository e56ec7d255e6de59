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
endif()
