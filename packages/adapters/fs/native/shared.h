/* What the native module's files share (dirscan.c defines the functions): a stat's timestamps in
 * nanoseconds, a JavaScript string as a C one, and the confined open of a directory beneath the
 * root that every read and scan goes through. */
#ifndef REWIND_DIRSCAN_SHARED_H
#define REWIND_DIRSCAN_SHARED_H
#include <node_api.h>
#include <stdint.h>
#include <sys/stat.h>

#ifdef __APPLE__
#define MTIME_NS(s) ((int64_t)(s).st_mtimespec.tv_sec * 1000000000LL + (s).st_mtimespec.tv_nsec)
#define CTIME_NS(s) ((int64_t)(s).st_ctimespec.tv_sec * 1000000000LL + (s).st_ctimespec.tv_nsec)
#else
#define MTIME_NS(s) ((int64_t)(s).st_mtim.tv_sec * 1000000000LL + (s).st_mtim.tv_nsec)
#define CTIME_NS(s) ((int64_t)(s).st_ctim.tv_sec * 1000000000LL + (s).st_ctim.tv_nsec)
#endif

/* A copy of a JavaScript string (malloc'd, NUL-terminated; the caller frees it), or NULL when the
 * value is not a string or memory ran out. `*length` (when not NULL) is its length in bytes, so a
 * caller can tell a string with a NUL in it. */
char *dirscan_js_string(napi_env env, napi_value value, size_t *length);

/* `relative` opened beneath `root_fd` as a directory, no symlink followed on the way (openat2, or
 * the component walk when `walk`); -1 with errno set otherwise. */
int dirscan_open_beneath(int root_fd, const char *relative, int walk);
#endif
