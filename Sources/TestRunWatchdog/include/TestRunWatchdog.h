#ifndef KSM_TEST_RUN_WATCHDOG_H
#define KSM_TEST_RUN_WATCHDOG_H

// The module's umbrella header (SwiftPM takes the header named after the module).
#include "TestProcessLimits.h"

/// Seconds after which this test process prints every thread's stack and exits 1, or 0 when the
/// watchdog could not start its thread. Armed by a constructor before any test runs.
unsigned ksm_test_watchdog_seconds(void);

#endif
