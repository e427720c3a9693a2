// Makes a test bundle's process robust against two ways of dying that are not a test failing:
// running out of descriptors and writing to a pipe or socket whose reader is gone.
//
// The whole suite runs in one process, tests in parallel, each with its mock brokers, clients,
// servers' pipes and sockets. librdkafka 2.0.2's mock cluster aborts the process when it cannot
// open a socket (an assertion on the broker's re-bound listener), so a host whose soft limit is
// 1024 would turn a busy moment into a crash of every test. SIGPIPE is otherwise ignored only by
// whichever part of the code gets there first. Children inherit both; a `ksm serve` ignores SIGPIPE
// itself anyway (its Redis client and SwiftNIO do), so it runs as in production. Only test targets
// link this module, so the constructor acts in every process that has it.
#define _GNU_SOURCE
#include "TestProcessLimits.h"

#include <signal.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <unistd.h>

static int limits_set = 0;

int ksm_test_process_limits_set(void) { return limits_set; }

long ksm_test_open_files_limit(void) {
    struct rlimit limit;
    if (getrlimit(RLIMIT_NOFILE, &limit) != 0) return -1;
    return limit.rlim_cur == RLIM_INFINITY ? -1 : (long)limit.rlim_cur;
}

__attribute__((constructor)) static void set_up_test_process(void) {
    signal(SIGPIPE, SIG_IGN);
    struct rlimit limit;
    if (getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur < limit.rlim_max) {
        // The hard limit, capped where select()-free code gains nothing more (children inherit it).
        rlim_t wanted = limit.rlim_max < 65536 ? limit.rlim_max : 65536;
        if (wanted > limit.rlim_cur) {
            limit.rlim_cur = wanted;
            setrlimit(RLIMIT_NOFILE, &limit);
        }
    }
    limits_set = 1;
}
