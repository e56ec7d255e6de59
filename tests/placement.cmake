weft_add_test(test_placement SOURCES test_placement.c LIBS weft_placement LABELS unit)
# The topology tree, failure domains, upmap items and the tree balancer on
# maps built by increments (issue 21).
weft_add_test(test_placement_tree SOURCES test_placement_tree.c
	LIBS weft_plcmap weft_monmap weft_proto weft_common LABELS unit)
