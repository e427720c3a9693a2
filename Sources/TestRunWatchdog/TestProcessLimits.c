// Makes a test bundle's process robust against two ways of dying that are not a test failing:
// running out of descriptors and writing to a pipe or socket whose reader is gone.
//
// The whole suite runs in one process, tests in parallel, each with its mock brokers, clients,
// servers' pipes and sockets. librdkafka 2.0.2's mock cluster aborts the process when it cannot
// open a socket (an assertion on the broker's re-bound listener), so a host whose soft limit is
// 1024 would turn a busy moment into a crash of every test. SIGPIPE is otherwise ignored only by
// whichever part of the code gets there first.
#define _GNU_SOURCE
#include "TestRunWatchdog.h"
#include "TestBundle.h"

#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

int ksm_is_test_bundle(void) {
    char exe[4096];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0) return 0;
    exe[n] = 0;
    static const char suffix[] = ".xctest";
    size_t length = strlen(suffix);
    return (size_t)n >= length && strcmp(exe + n - length, suffix) == 0;
}

long ksm_test_open_files_limit(void) {
    struct rlimit limit;
    if (getrlimit(RLIMIT_NOFILE, &limit) != 0) return -1;
    return limit.rlim_cur == RLIM_INFINITY ? -1 : (long)limit.rlim_cur;
}

__attribute__((constructor)) static void set_up_test_process(void) {
    if (!ksm_is_test_bundle()) return;
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
}
