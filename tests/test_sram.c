#include "tests.h"
Suite *sram_suite(void) { return suite_create("sram"); }
