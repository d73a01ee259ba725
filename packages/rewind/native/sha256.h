/* SHA-256 (FIPS 180-4) for the native hook client: it names the workspace's socket exactly as
 * server/workspaceSocket.ts does (the first 24 hex digits of SHA-256 over root NUL store). */
#ifndef REWIND_SHA256_H
#define REWIND_SHA256_H
#include <stddef.h>
#include <stdint.h>

/* Writes the 64 lowercase hex digits of SHA-256(data) and a NUL into hex (65 bytes). */
void sha256_hex(const unsigned char *data, size_t length, char hex[65]);

#endif
