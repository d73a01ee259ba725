/*
 * readbatch: a capture's bulk read of files beneath the workspace root, on a thread of libuv's
 * pool, with each content's SHA-256, so the main thread (which stores the previous batch
 * meanwhile) does none of the opens, stats, reads or hashing.
 *
 * readFilesBeneath(root: string, relatives: string[], walk: boolean, windows: [settle, clockSlack,
 *                  secondReadWithin] in ns, stableRead.ts's, so the rule is written once)
 *   -> Promise<{ buffer: ArrayBuffer, table: Float64Array, digests: Buffer } | null>
 *   table: [offset, length, mode] per file; mode -1 when the file was declined. buffer: the
 *   contents back to back. digests: 64 lowercase hex digits per file (latin1), in order, or null
 *   when this Node exports no SHA256 to addons (the caller hashes then).
 *   null: the root itself could not be opened (every file declined).
 *
 * Confinement is the JavaScript `readFiles` one (beneath.ts): each file's directory is opened
 * beneath the root with no symlink followed on the way (`dirscan_open_beneath`: openat2 with
 * RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS, or the component walk), one
 * descriptor per run of files in the same directory, and the file is opened by name in it with
 * O_NOFOLLOW. The hold-still rule is `readHeldStill`'s (stableRead.ts) with no expected content:
 * fstat before and after, a size, mtime or ctime that moved, a length that is not the size, a
 * ctime within SETTLE_NS of the read's start, or (changed within SECOND_READ_WITHIN_NS) a second
 * read that differs: declined. A declined file is read by the caller the walked way, with the
 * retries and the answer (or error) a read on its own gives, so declining is never wrong.
 */
#define _GNU_SOURCE
#define NAPI_VERSION 8
#include <node_api.h>

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "shared.h"



/* Larger files are declined: the caller reads them on its own, without a second copy here. */
#define MAX_FILE_BYTES (64LL * 1024 * 1024)


/* OpenSSL's one-shot SHA-256, which Node exports to addons (hardware-accelerated where the CPU
   has it). Weak: a host without it (another OpenSSL build, BoringSSL without the symbol) leaves
   it NULL; the batch then answers no digests and the caller hashes on its own thread, as it did
   before this module read for it (no second SHA-256 implementation to keep here). */
extern unsigned char *SHA256(const unsigned char *data, size_t length, unsigned char *digest) __attribute__((weak));

static void digest_hex(const unsigned char *data, size_t length, char *hex) {
  if (SHA256 == NULL) return;
  unsigned char digest[32];
  SHA256(data, length, digest);
  static const char digits[] = "0123456789abcdef";
  for (int i = 0; i < 32; i++) {
    hex[2 * i] = digits[digest[i] >> 4];
    hex[2 * i + 1] = digits[digest[i] & 15];
  }
}

typedef struct {
  char *root;
  char **relatives;
  uint32_t count;
  int walk;
  /* The hold-still rule's windows, handed over by stableRead.ts (`HOLD_STILL_WINDOWS_NS`), its one
     place: settle, clock slack, second read within. */
  int64_t settle_ns, clock_slack_ns, second_read_within_ns;
  int root_failed;
  unsigned char *data;
  size_t used, capacity;
  double *table;   /* offset, length, mode per file */
  char *digests;   /* 64 per file */
  napi_deferred deferred;
  napi_async_work work;
} batch_t;

static int64_t now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_REALTIME, &t);
  return (int64_t)t.tv_sec * 1000000000LL + t.tv_nsec;
}

static int reserve(batch_t *b, size_t more) {
  if (b->used + more <= b->capacity) return 0;
  size_t next = b->capacity == 0 ? 1 << 20 : b->capacity;
  while (next < b->used + more) next *= 2;
  unsigned char *grown = realloc(b->data, next);
  if (grown == NULL) return -1;
  b->data = grown;
  b->capacity = next;
  return 0;
}

/* Reads at most `size` bytes from offset 0 into b->data at b->used (to the end when size is 0, as
   readFileSync does); the count read, or -1. */
static int64_t read_into(batch_t *b, int fd, int64_t size) {
  int64_t filled = 0;
  for (;;) {
    size_t want = size > 0 ? (size_t)(size - filled) : 65536;
    if (size > 0 && filled >= size) break;
    if (reserve(b, (size_t)filled + want) != 0) return -1;
    ssize_t got = pread(fd, b->data + b->used + filled, want, (off_t)filled);
    if (got < 0) {
      if (errno == EINTR) continue;
      return -1;
    }
    if (got == 0) break;
    filled += got;
    if (size == 0 && filled > MAX_FILE_BYTES) return -1;
  }
  return filled;
}

static int moved(const struct stat *a, const struct stat *b) {
  return a->st_size != b->st_size || MTIME_NS(*a) != MTIME_NS(*b) || CTIME_NS(*a) != CTIME_NS(*b);
}

/* One file, opened by name in `dirfd`: its content appended at b->used, or -1 (declined). */
static int read_one(batch_t *b, int dirfd, const char *name, uint32_t i) {
  if (name[0] == '\0' || strcmp(name, ".") == 0 || strcmp(name, "..") == 0) return -1;
  int fd = openat(dirfd, name, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return -1;
  int result = -1;
  unsigned char *again = NULL;
  int64_t started = now_ns();
  struct stat before, after, last;
  if (fstat(fd, &before) != 0 || !S_ISREG(before.st_mode) || before.st_size > MAX_FILE_BYTES) goto done;
  int64_t length = read_into(b, fd, (int64_t)before.st_size);
  if (length < 0 || fstat(fd, &after) != 0) goto done;
  if (moved(&before, &after) || length != (int64_t)after.st_size) goto done;
  int64_t age = started - CTIME_NS(after);
  if (age < b->settle_ns && age > -b->clock_slack_ns) goto done;
  if (age < b->second_read_within_ns && length > 0) {
    again = malloc((size_t)length);
    if (again == NULL) goto done;
    int64_t filled = 0;
    while (filled < length) {
      ssize_t got = pread(fd, again + filled, (size_t)(length - filled), (off_t)filled);
      if (got < 0 && errno == EINTR) continue;
      if (got <= 0) break;
      filled += got;
    }
    if (filled != length || fstat(fd, &last) != 0 || moved(&after, &last) ||
        memcmp(again, b->data + b->used, (size_t)length) != 0)
      goto done;
  }
  b->table[3 * i] = (double)b->used;
  b->table[3 * i + 1] = (double)length;
  b->table[3 * i + 2] = (double)(before.st_mode & 07777);
  digest_hex(b->data + b->used, (size_t)length, b->digests + 64 * (size_t)i);
  b->used += (size_t)length;
  result = 0;
done:
  free(again);
  close(fd);
  return result;
}

static void execute(napi_env env, void *data) {
  (void)env;
  batch_t *b = data;
  for (uint32_t i = 0; i < b->count; i++) b->table[3 * i + 2] = -1;
  int root_fd = open(b->root, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (root_fd < 0) {
    b->root_failed = 1;
    return;
  }
  char *directory = NULL;
  int dirfd = -1;
  for (uint32_t i = 0; i < b->count; i++) {
    char *relative = b->relatives[i];
    char *cut = strrchr(relative, '/');
    const char *name = cut == NULL ? relative : cut + 1;
    /* The parent: "" for the root's own files. */
    size_t parent_length = cut == NULL ? 0 : (size_t)(cut - relative);
    if (directory == NULL || strlen(directory) != parent_length || strncmp(directory, relative, parent_length) != 0) {
      if (dirfd >= 0) close(dirfd);
      free(directory);
      directory = strndup(relative, parent_length);
      dirfd = directory == NULL ? -1 : dirscan_open_beneath(root_fd, directory, b->walk);
    }
    if (dirfd >= 0) read_one(b, dirfd, name, i);
  }
  if (dirfd >= 0) close(dirfd);
  free(directory);
  close(root_fd);
}

static void release(batch_t *b) {
  for (uint32_t i = 0; i < b->count; i++) free(b->relatives[i]);
  free(b->relatives);
  free(b->root);
  free(b->data);
  free(b->table);
  free(b->digests);
  free(b);
}

static void complete(napi_env env, napi_status status, void *data) {
  batch_t *b = data;
  napi_value result = NULL, buffer, table, table_buffer, digests;
  void *bytes;
  if (status != napi_ok) {
    napi_value message;
    napi_create_string_utf8(env, "readFilesBeneath: the batch did not run", NAPI_AUTO_LENGTH, &message);
    napi_create_error(env, NULL, message, &result);
    napi_reject_deferred(env, b->deferred, result);
  } else if (b->root_failed) {
    napi_get_null(env, &result);
    napi_resolve_deferred(env, b->deferred, result);
  } else if (napi_create_arraybuffer(env, b->used, &bytes, &buffer) == napi_ok &&
             napi_create_arraybuffer(env, sizeof(double) * 3 * b->count, (void **)&table, &table_buffer) == napi_ok &&
             (SHA256 == NULL ? napi_get_null(env, &digests)
                             : napi_create_buffer_copy(env, 64 * (size_t)b->count, b->digests, NULL, &digests)) == napi_ok) {
    if (b->used > 0) memcpy(bytes, b->data, b->used);
    void *cells;
    napi_get_arraybuffer_info(env, table_buffer, &cells, NULL);
    memcpy(cells, b->table, sizeof(double) * 3 * b->count);
    napi_value typed;
    napi_create_typedarray(env, napi_float64_array, 3 * b->count, table_buffer, 0, &typed);
    napi_create_object(env, &result);
    napi_set_named_property(env, result, "buffer", buffer);
    napi_set_named_property(env, result, "table", typed);
    napi_set_named_property(env, result, "digests", digests);
    napi_resolve_deferred(env, b->deferred, result);
  } else {
    napi_value message;
    napi_create_string_utf8(env, "readFilesBeneath: out of memory", NAPI_AUTO_LENGTH, &message);
    napi_create_error(env, NULL, message, &result);
    napi_reject_deferred(env, b->deferred, result);
  }
  napi_delete_async_work(env, b->work);
  release(b);
}

static char *copy_string(napi_env env, napi_value value) {
  size_t length;
  char *out = dirscan_js_string(env, value, &length);
  /* A name with a NUL in it would be cut short: decline it (an empty name is never opened). */
  if (out != NULL && strlen(out) != length) out[0] = '\0';
  return out;
}

static napi_value fail(napi_env env, batch_t *b, const char *message) {
  release(b);
  napi_throw_error(env, NULL, message);
  return NULL;
}

static napi_value read_files_beneath(napi_env env, napi_callback_info info) {
  size_t argc = 4;
  napi_value argv[4];
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc < 4) {
    napi_throw_error(env, NULL, "readFilesBeneath: bad arguments");
    return NULL;
  }
  batch_t *b = calloc(1, sizeof *b);
  if (b == NULL) {
    napi_throw_error(env, NULL, "readFilesBeneath: out of memory");
    return NULL;
  }
  bool walk = false;
  napi_get_value_bool(env, argv[2], &walk);
  b->walk = walk;
  int64_t *windows[3] = {&b->settle_ns, &b->clock_slack_ns, &b->second_read_within_ns};
  for (uint32_t i = 0; i < 3; i++) {
    napi_value element;
    double value;
    if (napi_get_element(env, argv[3], i, &element) != napi_ok ||
        napi_get_value_double(env, element, &value) != napi_ok || !(value >= 0))
      return fail(env, b, "readFilesBeneath: the hold-still windows must be three non-negative numbers");
    *windows[i] = (int64_t)value;
  }
  b->root = copy_string(env, argv[0]);
  if (b->root == NULL || b->root[0] != '/') return fail(env, b, "readFilesBeneath: the root must be an absolute path");
  uint32_t count;
  if (napi_get_array_length(env, argv[1], &count) != napi_ok) return fail(env, b, "readFilesBeneath: an array expected");
  b->relatives = calloc(count == 0 ? 1 : count, sizeof(char *));
  b->table = calloc(count == 0 ? 1 : 3 * (size_t)count, sizeof(double));
  b->digests = calloc(count == 0 ? 1 : 64 * (size_t)count, 1);
  if (b->relatives == NULL || b->table == NULL || b->digests == NULL) return fail(env, b, "readFilesBeneath: out of memory");
  for (uint32_t i = 0; i < count; i++) {
    napi_value element;
    if (napi_get_element(env, argv[1], i, &element) != napi_ok) return fail(env, b, "readFilesBeneath: bad element");
    b->relatives[i] = copy_string(env, element);
    b->count = i + 1;
    if (b->relatives[i] == NULL) return fail(env, b, "readFilesBeneath: a string expected");
  }
  b->count = count;
  napi_value promise, name;
  if (napi_create_promise(env, &b->deferred, &promise) != napi_ok) return fail(env, b, "readFilesBeneath: no promise");
  napi_create_string_utf8(env, "rewind.readFilesBeneath", NAPI_AUTO_LENGTH, &name);
  if (napi_create_async_work(env, NULL, name, execute, complete, b, &b->work) != napi_ok ||
      napi_queue_async_work(env, b->work) != napi_ok) {
    /* The deferred is left unresolved; the thrown error is the answer. */
    return fail(env, b, "readFilesBeneath: could not queue the batch");
  }
  return promise;
}

int export_read_batch(napi_env env, napi_value exports) {
  napi_value value;
  if (napi_create_function(env, "readFilesBeneath", NAPI_AUTO_LENGTH, read_files_beneath, NULL, &value) != napi_ok)
    return -1;
  return napi_set_named_property(env, exports, "readFilesBeneath", value) == napi_ok ? 0 : -1;
}
