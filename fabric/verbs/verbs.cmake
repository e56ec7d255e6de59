# verbs backend: appends to FAB_SOURCES / FAB_LIBS / FAB_DEFS (WEFT_HAVE_VERBS=1)
