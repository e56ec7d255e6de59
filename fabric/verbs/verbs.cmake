# verbs backend: appends to FAB_SOURCES / FAB_LIBS / FAB_DEFS (WEFT_HAVE_VERBS=1).
# libibverbs + librdmacm come from WEFT_WITH_VERBS_PC (cmake/WeftDeps.cmake).
list(APPEND FAB_SOURCES
	verbs/verbs.c
	verbs/verbs_cm.c
	verbs/verbs_dev.c
	verbs/verbs_mem.c
	verbs/verbs_tx.c
	verbs/verbs_win.c)
list(APPEND FAB_LIBS PkgConfig::WEFT_WITH_VERBS_PC)
list(APPEND FAB_DEFS WEFT_HAVE_VERBS=1)
