#define _GNU_SOURCE
#include "TestBundle.h"

#include <string.h>
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
