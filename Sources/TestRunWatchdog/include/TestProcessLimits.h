#ifndef KSM_TEST_PROCESS_LIMITS_H
#define KSM_TEST_PROCESS_LIMITS_H

/// 1 once the test bundle's constructor has raised the descriptor limit and ignored SIGPIPE; 0
/// before it ran.
int ksm_test_process_limits_set(void);

/// This process's soft limit on open descriptors, or -1 when it is unlimited or unknown.
long ksm_test_open_files_limit(void);

#endif
