// Ends a test process that has run far longer than the suite ever takes, after printing every
// thread's stack: a hang then fails CI within its budget with the stacks that say where, instead of
// running it out of its 90 minutes with nothing to read.
//
// C, and armed by a constructor, because a hang can come before any Swift helper runs: a stalled
// cooperative pool stops every test at once. Armed in whatever process links it, which is a test
// bundle only: `ksm` runs as long as it likes and links none of this (`ShippingBinaryTests`).
#define _GNU_SOURCE
#include "TestRunWatchdog.h"

#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static unsigned armed_seconds = 0;

unsigned ksm_test_watchdog_seconds(void) { return armed_seconds; }

static void *watch(void *unused) {
    (void)unused;
    struct timespec left = {(time_t)armed_seconds, 0};
    while (nanosleep(&left, &left) != 0) {}
    pid_t self = getpid();
    char pid_text[32];
    snprintf(pid_text, sizeof pid_text, "%d", (int)self);
    dprintf(2, "\nTEST WATCHDOG: this test process has run %u s; every thread's stack follows (gdb), then it exits 1\n",
            armed_seconds);
    // Where Yama restricts ptrace to descendants, allow the debugger (our child) to attach to us.
    prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0);
    pid_t child = fork();
    if (child == 0) {
        dup2(2, 1);
        execlp("gdb", "gdb", "-p", pid_text, "-batch", "-ex", "thread apply all bt 30", (char *)NULL);
        _exit(127);
    }
    if (child > 0) {
        for (int i = 0; i < 1200; i++) {  // two minutes at most
            int status;
            if (waitpid(child, &status, WNOHANG) == child) break;
            usleep(100000);
        }
        kill(child, SIGKILL);
    }
    // No exit handlers: other threads may hold locks they will never release.
    _exit(1);
}

__attribute__((constructor)) static void arm(void) {
    unsigned seconds = 1800;  // the suite takes 3.5 minutes here; a CI host three times slower stays far below
    const char *setting = getenv("KSM_TEST_WATCHDOG_SECONDS");
    if (setting != NULL && atoi(setting) > 0) seconds = (unsigned)atoi(setting);
    armed_seconds = seconds;
    pthread_t thread;
    pthread_attr_t attributes;
    pthread_attr_init(&attributes);
    pthread_attr_setdetachstate(&attributes, PTHREAD_CREATE_DETACHED);
    if (pthread_create(&thread, &attributes, watch, NULL) != 0) armed_seconds = 0;
    pthread_attr_destroy(&attributes);
}
