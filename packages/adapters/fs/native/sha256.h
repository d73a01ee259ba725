/* SHA-256 (FIPS 180-4): the digests of the contents `readbatch.c` reads (a copy of the rewind
 * package's native/sha256.h). */
#ifndef REWIND_SHA256_H
#define REWIND_SHA256_H
#include <stddef.h>
#include <stdint.h>

/* Writes the 64 lowercase hex digits of SHA-256(data) and a NUL into hex (65 bytes). */
void sha256_hex(const unsigned char *data, size_t length, char hex[65]);

#endif
