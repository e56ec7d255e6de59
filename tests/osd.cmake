# OSD daemon and libweft (osd/, client/): functional tests with one real
# weft-mon and three weft-osd processes on loopback (public 127.1.0.x,
# cluster 127.2.0.x), driven by tests/test_osd_cluster.sh.
if(TARGET weft-osd AND TARGET weft_client)
	add_executable(test_osd_io ${CMAKE_CURRENT_LIST_DIR}/test_osd_io.c)
	target_link_libraries(test_osd_io PRIVATE weft_client m)

	# One port range per case so cases may run in parallel; ms_type is the
	# fabric backend (the ucx/verbs variants skip with 77 when it can't open).
	function(weft_osd_func_test case ms_type label port)
		add_test(NAME osd_func_${case}_${ms_type}
			COMMAND ${CMAKE_CURRENT_LIST_DIR}/test_osd_cluster.sh ${case} ${ms_type} ${port}
				$<TARGET_FILE:weft-mon> $<TARGET_FILE:weft-osd> $<TARGET_FILE:weft>
				$<TARGET_FILE:test_osd_io>)
		set_tests_properties(osd_func_${case}_${ms_type} PROPERTIES LABELS "${label}"
			TIMEOUT 600 SKIP_RETURN_CODE 77)
		if(ARGN)
			set_tests_properties(osd_func_${case}_${ms_type} PROPERTIES ENVIRONMENT "${ARGN}")
		endif()
	endfunction()
	weft_osd_func_test(io tcp func 17100)
	weft_osd_func_test(stale tcp func 17200)
	weft_osd_func_test(minsize tcp func 17300)
	# osd_memory_target 256M under sustained writes: peak RSS (VmHWM) under it
	weft_osd_func_test(memory tcp func 17800)
	# weft bench against the cluster (docs/bench.md): write/seq/rand, JSON,
	# cleanup, Ctrl-C; and a damaged copy on the primary's disk reported
	weft_osd_func_test(benchtool tcp func 18500)
	weft_osd_func_test(corrupt tcp func 18600)
	# UCX over TCP sockets, every daemon on 127.0.0.1 (UCX only takes
	# interface addresses, docs/ucx.md); 500 objects keep it near 30 s under
	# ASan (the TCP case writes 2,000). The hooks are off as in fabric_ucx.cmake.
	weft_osd_func_test(io ucx func 17400 "UCX_TLS=tcp;WEFT_TEST_OSD_OBJECTS=500;WEFT_TEST_STALEKEY=1;\
UCX_MEM_MALLOC_HOOKS=no;UCX_MEM_MMAP_HOOK_MODE=none;UCX_WARN_UNUSED_ENV_VARS=n")
	# Over verbs: the host has no RDMA device, so the whole cluster (1 mon,
	# 3 OSDs, the client) runs in one Soft-RoCE VM boot, all on 198.18.0.1
	# (verbs-tests/osd-in-vm.sh); skips (77) only without qemu or the harness.
	if(WEFT_WITH_VERBS)
		add_test(NAME osd_func_io_verbs
			COMMAND ${CMAKE_SOURCE_DIR}/verbs-tests/run-vm.sh osd ${CMAKE_BINARY_DIR})
		set_tests_properties(osd_func_io_verbs PROPERTIES LABELS "verbs" TIMEOUT 1200
			SKIP_RETURN_CODE 77 RESOURCE_LOCK rdma_vm)
		# osd_memory_target 256M with pinned (registered) memory: the memory case
		add_test(NAME osd_func_memory_verbs
			COMMAND ${CMAKE_SOURCE_DIR}/verbs-tests/run-vm.sh osd ${CMAKE_BINARY_DIR})
		set_tests_properties(osd_func_memory_verbs PROPERTIES LABELS "verbs" TIMEOUT 1200
			SKIP_RETURN_CODE 77 RESOURCE_LOCK rdma_vm
			ENVIRONMENT "WEFT_VM_OSD_CASE=memory;WEFT_VM_MEM=4G")
	endif()
endif()

# Failure and recovery (osd/pg/ wired in by osd/osd_pg.c, osd_pgenv.c, osd_push.c):
# tests/test_recovery.sh drives real mons and OSDs through kills,
# restarts, out/in, corruption and a mon leader failover (docs/recovery.md).
if(TARGET weft-osd AND TARGET weft_client)
	add_executable(test_recovery_io ${CMAKE_CURRENT_LIST_DIR}/test_recovery_io.c)
	target_link_libraries(test_recovery_io PRIVATE weft_client weft_placement)
	function(weft_recovery_test case port timeout)
		add_test(NAME osd_recovery_${case}
			COMMAND ${CMAKE_CURRENT_LIST_DIR}/test_recovery.sh ${case} tcp ${port}
				$<TARGET_FILE:weft-mon> $<TARGET_FILE:weft-osd> $<TARGET_FILE:weft>
				$<TARGET_FILE:test_recovery_io>)
		set_tests_properties(osd_recovery_${case} PROPERTIES LABELS "func;recovery"
			TIMEOUT ${timeout} SKIP_RETURN_CODE 77)
	endfunction()
	weft_recovery_test(thrash 19100 600)
	weft_recovery_test(killprimary 19200 600)
	weft_recovery_test(outin 19300 600)
	weft_recovery_test(scrub 19400 600)
	weft_recovery_test(monkill 19500 600)
	weft_recovery_test(pastint 25100 600)
	weft_recovery_test(peerdown 25200 600)
endif()

# Past intervals of a PG (osd/pg/pg_pi.c): the prior-set rule peering applies.
weft_add_test(test_pg_pi SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_pg_pi.c
	${PROJECT_SOURCE_DIR}/osd/pg/pg_pi.c LIBS weft_proto LABELS unit)

# Recovery throttled by client p99 (osd/osd_rthrottle.c): decisions on histograms.
weft_add_test(test_osd_rthrottle SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_osd_rthrottle.c
	${PROJECT_SOURCE_DIR}/osd/osd_rthrottle.c LIBS weft_common LABELS unit)

# The thrash test (scripts/thrash.sh, docs/reliability.md): 3 mons, 5 OSDs, a
# journaling writer, kills of one and two OSDs, of primaries, during peering,
# recovery and backfill, out/in, mon leader kills; then clean and every copy
# checked. A bounded run here; scripts/thrash.sh --minutes 30 is the soak.
if(TARGET weft-osd AND TARGET weft_client)
	add_executable(thrash_io ${CMAKE_CURRENT_LIST_DIR}/thrash_io.c)
	target_link_libraries(thrash_io PRIVATE weft_client weft_common)
	add_test(NAME osd_thrash
		COMMAND ${PROJECT_SOURCE_DIR}/scripts/thrash.sh --build ${CMAKE_BINARY_DIR}
			--seconds 200 --port 30000)
	set_tests_properties(osd_thrash PROPERTIES LABELS "func;recovery;thrash" TIMEOUT 900
		SKIP_RETURN_CODE 77)
endif()

# The PG state machine under simulation (tests/sim_pg.c): random message orders,
# crashes (two at once too), restarts, out/in and map delays; invariants asserted
# (no acknowledged write lost, identical copies and no strays after clean, verify
# counts a corrupted copy, repair fixes it). Fixed seeds, so a failure replays with
# `sim_pg --seed N --runs 1 -v`; `sim_pg --seed $RANDOM --seconds 600` explores.
add_executable(sim_pg ${CMAKE_CURRENT_LIST_DIR}/sim_pg.c ${CMAKE_CURRENT_LIST_DIR}/sim_pg_scn.c)
target_link_libraries(sim_pg PRIVATE weft_pg)
add_test(NAME sim_pg COMMAND sim_pg --seed 1 --runs 200)
set_tests_properties(sim_pg PROPERTIES LABELS "unit;sim" TIMEOUT 600)
# The scripted regressions (tests/sim_pg_scn.c, docs/recovery.md "What went wrong
# before"): each failure sequence that once lost or diverged data, 20 message orders.
add_test(NAME sim_pg_scenarios COMMAND sim_pg --scenarios all --seed 1 --runs 20)
set_tests_properties(sim_pg_scenarios PROPERTIES LABELS "unit;sim" TIMEOUT 300)
# Seeds outside the 200 above that once failed (docs/recovery.md "What went wrong
# before"), each replayed in the model it was found in (--map-saved-at-once: the
# map saved ahead of the PGs' queued transactions, as before 1c3c77f), where
# undoing its fix fails it again (checked for all six, docs/reliability.md). A
# change to the simulator's random draws moves what a seed plays, so each stays
# covered only until then; the scenarios are the lasting form.
foreach(seed 10957 19297 31069 38970 49048 92466)
	add_test(NAME sim_pg_found_${seed} COMMAND sim_pg --map-saved-at-once --seed ${seed} --runs 1)
	set_tests_properties(sim_pg_found_${seed} PROPERTIES LABELS "unit;sim" TIMEOUT 120)
endforeach()
# Found in the present model: 15127 (a primary that never asked the up OSDs the
# past intervals it learnt while peering named: peering for ever), 27312 (an
# answer to an earlier round of a log fetch taken for the new round's: entries
# missing from the merged log, pushes refused for ever).
foreach(seed 15127 27312)
	add_test(NAME sim_pg_found_${seed} COMMAND sim_pg --seed ${seed} --runs 1)
	set_tests_properties(sim_pg_found_${seed} PROPERTIES LABELS "unit;sim" TIMEOUT 120)
endforeach()

# 30 OSDs in 6 hosts and 2 racks, a pool with failure domain rack, the
# balancer at work, a 31st OSD filled, one rack stopped (issue 21;
# docs/scale.md). Ports 33000-33099 (place) and 33100-33199 (full).
if(TARGET weft-osd AND TARGET test_recovery_io)
	foreach(case place full)
		if(case STREQUAL place)
			set(port 33000)
		else()
			set(port 33100)
		endif()
		add_test(NAME scale_func_30osd_${case}
			COMMAND ${CMAKE_CURRENT_LIST_DIR}/test_scale_cluster.sh ${case} ${port}
				$<TARGET_FILE:weft-mon> $<TARGET_FILE:weft-osd> $<TARGET_FILE:weft>
				$<TARGET_FILE:test_recovery_io>)
		# never both at once: 60 ASan OSDs on two cores missed heartbeats,
		# OSDs were marked down and each case took 323 s instead of 92-128
		# (CI of 2026-12-07, when a new test put them side by side)
		set_tests_properties(scale_func_30osd_${case} PROPERTIES LABELS "func;scale"
			TIMEOUT 600 SKIP_RETURN_CODE 77 RESOURCE_LOCK scale30)
	endforeach()
endif()

# The op pipeline and its replication bookkeeping (osd/osd_op.c, osd_repl.c,
# osd_pgs.c) against a fake fabric, store, network and PG machine.
weft_add_test(test_osd_op SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_osd_op.c
	${PROJECT_SOURCE_DIR}/osd/osd_op.c ${PROJECT_SOURCE_DIR}/osd/osd_repl.c
	${PROJECT_SOURCE_DIR}/osd/osd_wire.c ${PROJECT_SOURCE_DIR}/osd/osd_pgs.c
	LIBS weft_evloop weft_proto weft_plcmap weft_monmap weft_common LABELS unit)
target_include_directories(test_osd_op PRIVATE ${PROJECT_SOURCE_DIR}/include)
