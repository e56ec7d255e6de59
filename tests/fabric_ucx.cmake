# The fabric suite on the UCX backend: the very binary and checks of
# test_fabric_tcp with argv[1] = ucx, once per UCX transport set (docs/ucx.md).
# UCX's malloc/mmap hooks patch what ASan intercepts: turned off here as a
# guard (harmless for tcp and shm, which keep no registration cache).
if(WEFT_WITH_UCX AND TARGET test_fabric_tcp)
	set(_ucx_env UCX_MEM_MALLOC_HOOKS=no UCX_MEM_MMAP_HOOK_MODE=none UCX_WARN_UNUSED_ENV_VARS=n)
	# tcp: sockets for the connection manager (sockcm) and for every lane.
	add_test(NAME test_fabric_ucx_tcp COMMAND test_fabric_tcp ucx)
	set_tests_properties(test_fabric_ucx_tcp PROPERTIES LABELS "unit;fabric" TIMEOUT 600
		SKIP_RETURN_CODE 77 ENVIRONMENT "UCX_TLS=tcp;${_ucx_env}")
	# shm allowed: posix/cma next to tcp (the connection manager needs tcp).
	# UCX 1.13 still picks tcp lanes, because shared memory does not support
	# peer error handling there; this proves the configuration works.
	add_test(NAME test_fabric_ucx_shm COMMAND test_fabric_tcp ucx)
	set_tests_properties(test_fabric_ucx_shm PROPERTIES LABELS "unit;fabric" TIMEOUT 600
		SKIP_RETURN_CODE 77 ENVIRONMENT "UCX_TLS=posix,cma,tcp;${_ucx_env}")
endif()
