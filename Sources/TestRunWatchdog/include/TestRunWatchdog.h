#ifndef KSM_TEST_RUN_WATCHDOG_H
#define KSM_TEST_RUN_WATCHDOG_H

/// Seconds after which this test process prints every thread's stack and exits 1, or 0 when the
/// watchdog is not armed (not a test bundle). Armed by a constructor before any test runs.
unsigned ksm_test_watchdog_seconds(void);

/// This test process's soft limit on open descriptors (-1 when unlimited or unknown), raised towards
/// the hard limit by a constructor in a test bundle; SIGPIPE is ignored there as well.
long ksm_test_open_files_limit(void);

#endif
