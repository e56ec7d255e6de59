# UCX backend: appends to FAB_SOURCES / FAB_LIBS / FAB_DEFS (WEFT_HAVE_UCX=1)
