#include "tests.h"
Suite *opkey_suite(void) { return suite_create("opkey"); }
