# The event loop's unit tests: fake clock, pipes and eventfds, no daemons, no ports.
weft_add_test(test_evloop SOURCES test_evloop.c LIBS weft_evloop weft_common LABELS unit)
