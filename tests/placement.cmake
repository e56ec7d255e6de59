weft_add_test(test_placement SOURCES test_placement.c LIBS weft_placement LABELS unit)
