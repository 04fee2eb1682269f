/* SHA-256 (FIPS 180-4), for the names ExecuTorch gives data by content: XNNPACK's preprocess
 * keys each weight in the named data by the hex SHA-256 of its bytes (the real files'
 * named_data keys are exactly that). */
#ifndef LS_SHA256_H
#define LS_SHA256_H

#include <stddef.h>
#include <stdint.h>

void ls_sha256(const void *data, size_t n, uint8_t out[32]);
/* The digest as 64 lowercase hex digits and a NUL. */
void ls_sha256_hex(const void *data, size_t n, char out[65]);

#endif
