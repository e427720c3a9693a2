#ifndef FAIRPLAYKSM_CJEMALLOC_SHIM_H
#define FAIRPLAYKSM_CJEMALLOC_SHIM_H

// Debian's libjemalloc2 exports the unprefixed malloc family: linking it replaces glibc's malloc
// for the whole `ksm` process (Swift, Foundation, OpenSSL, librdkafka). `mallctl` reads its state.
#include <jemalloc/jemalloc.h>

#endif
