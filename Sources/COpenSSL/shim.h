#ifndef FAIRPLAYKSM_COPENSSL_SHIM_H
#define FAIRPLAYKSM_COPENSSL_SHIM_H

#include <openssl/evp.h>
#include <openssl/rsa.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/err.h>
#include <openssl/rand.h>
#include <openssl/crypto.h>
#include <openssl/sha.h>
#include <openssl/core_names.h>
#include <openssl/hmac.h>

#endif
