# UCX backend: appends to FAB_SOURCES / FAB_LIBS / FAB_DEFS (WEFT_HAVE_UCX=1).
# WEFT_WITH_UCX_PC is the pkg-config 'ucx' module found by weft_backend_detect.
list(APPEND FAB_SOURCES ucx/ucx.c ucx/ucx_ep.c ucx/ucx_tx.c ucx/ucx_am.c)
list(APPEND FAB_LIBS PkgConfig::WEFT_WITH_UCX_PC)
list(APPEND FAB_DEFS WEFT_HAVE_UCX=1)
