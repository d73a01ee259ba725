/*
 * dirscan: the bulk directory listing a snapshot scan is built on, in one call from JavaScript.
 *
 * A capture of a large workspace lists every directory and `lstat`s every entry. Through Node's
 * `fs` each entry costs a JavaScript call, a Stats object and a full-path lookup in the kernel;
 * here each directory is opened once and its entries are `fstatat`ed relative to it (never
 * following a symlink), spread over a few threads, and the results come back packed in typed
 * arrays. Nothing is written: the module only reads directories, stats and link targets.
 *
 * scan(paths: string[], threads: number, previous?: Array<ArrayBuffer | undefined>)
 *   -> Array<Listing | Failure | true>
 *   Listing: { names: string[], numbers: Float64Array [kind, size, mode] per entry,
 *              times: BigInt64Array [mtimeNs, ctimeNs] per entry, inodes: BigUint64Array,
 *              targets: Array (a symlink's target at its index, otherwise a hole),
 *              blob: ArrayBuffer (the whole listing as bytes) }
 *   Failure: { errno: number, syscall: string, path: string }
 *   true: the listing is byte for byte the `previous` blob given for that path, so nothing is
 *   built for it (most directories, in a repeat scan of a tree where little changed).
 * kind: 0 file, 1 directory, 2 symlink, 3 other. An entry that vanishes between the listing and
 * its stat (or its readlink) is left out, as the JavaScript scanner does.
 *
 * scanBeneath(root: string, relatives: string[], threads: number, previous?) -> the same answers,
 *   or null when the root itself cannot be opened
 *   (Linux only) Each directory is opened relative to the root by `openat2` with RESOLVE_BENEATH
 *   and RESOLVE_NO_SYMLINKS: the kernel refuses a path with a symlink anywhere on it or one that
 *   leaves the root, in the same step that opens it, so a caller that only needs real directories
 *   under the root can skip checking each path itself. A failure here is the caller's cue to
 *   take the checked way.
 *   With statFreeNames and statFreePaths (arrays of strings) it also seals each listing as
 *   sealBeneath does, from the same listing, and answers { listings, checks, newestByDirectory,
 *   failed } (see sealBeneath): a capture's seal then costs no second listing of the tree.
 * scanBeneathAsync(the same arguments) -> a promise of the same answer
 *   (Linux only) The listings are taken on a thread of libuv's pool, so a scan takes in one wave
 *   of directories while the next is listed.
 *
 * A name that is not valid UTF-8 comes back as a Buffer of its bytes in `names` (a string would
 * have its bad bytes replaced by U+FFFD, mangling it into another name), for the caller to report.
 *
 * Kernel-confined file operations (all POSIX; `openat2` on Linux, a component walk elsewhere).
 * They answer a number: >= 0 for success (a descriptor where one is opened), -errno for failure.
 *   openDirBeneath(root, relative, walk?) -> fd: the directory `relative` under `root` ("" is the root),
 *     opened with openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS), or, where
 *     openat2 is missing (ENOSYS), by walking the components with openat(O_DIRECTORY |
 *     O_NOFOLLOW); `walk` true takes the walk even where openat2 exists (tests compare the two).
 *     A symlink anywhere on the way is -ELOOP, whichever way it was found.
 *   openAt(dirfd, name, flags, mode) -> fd: openat with O_NOFOLLOW | O_CLOEXEC added.
 *   renameAt(dirfd, from, to), unlinkAt(dirfd, name) (never AT_REMOVEDIR), rmdirAt(dirfd, name)
 *   (an empty directory only),
 *   mkdirAt(dirfd, name, mode) (0 when a directory is already there), symlinkAt(target, dirfd, name).
 *   Every `name` is one component: a `/`, `.` or `..` is -EINVAL, so these can only act inside
 *   the directory the descriptor names, which the kernel opened beneath the root.
 *
 * The workspace watcher (watchOpen, watchDrain, watchClose) lives in `watch.c`, built into the
 * same module.
 */
#define _GNU_SOURCE
#define NAPI_VERSION 8
#include <node_api.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <sys/types.h>

#include "shared.h"

#if defined(__linux__)
#include <linux/openat2.h>
#include <sys/syscall.h>
/* SHA-256 from the OpenSSL Node links and exports to its addons (sealBeneath only). */
#include <openssl/sha.h>
#endif


#define MAX_THREADS 8

/* sealBeneath: how much of a listing's SHA-256 its check is: 128 bits, so that a capture may take
   an equal check for an unchanged listing (a later call stops early, or lists only what changed). */
#define SEAL_CHECK_BYTES 16

/* Where an entry's name and target lie in its listing's `text` (a NUL-terminated string each). */
#define NO_TEXT ((size_t)-1)

typedef struct {
  size_t name;
  size_t target; /* a symlink's target, else NO_TEXT */
  double kind, size, mode;
  int64_t mtime_ns, ctime_ns;
  uint64_t inode;
} entry_t;

typedef struct {
  char *path;
  entry_t *entries;
  size_t count, capacity;
  /* Every name and target of the listing, one after another: one allocation per directory rather
     than one per entry (the scan's threads would otherwise contend on malloc for each name). */
  char *text;
  size_t text_length, text_capacity;
  int err;              /* 0, or the errno of the failure */
  const char *syscall;  /* the call that failed */
  char *err_path;       /* the path it failed on (malloc'd) */
  /* The listing as bytes (names, targets, stats), compared with the caller's previous one. */
  const unsigned char *previous;
  size_t previous_length;
  unsigned char *blob;
  size_t blob_length;
  int same; /* the listing is byte for byte the previous one */
  int64_t newest_ctime; /* sealed: the newest ctime of an entry whose stat is sealed */
  unsigned char digest[32]; /* sealed: the SHA-256 of the sealed form */
  int sealed; /* the digest and newest_ctime were taken */
} listing_t;

typedef struct {
  listing_t *listings;
  size_t count;
  size_t next;  /* the next listing to take, shared by the threads */
  int root_fd;  /* >= 0: paths are relative to it and opened beneath it */
  /* Each listing's sealed form is digested (seal_digest): sealBeneath, or scanBeneath when given
     stat-free names and paths. */
  int seal;
  /* The listings are handed to JavaScript (scan, scanBeneath): each is also serialized, and kept. */
  int keep;
  char **free_names, **free_paths;
  size_t free_name_count, free_path_count;
} job_t;

static double kind_of(mode_t mode) {
  if (S_ISREG(mode)) return 0;
  if (S_ISDIR(mode)) return 1;
  if (S_ISLNK(mode)) return 2;
  return 3;
}

static char *join_path(const char *dir, const char *name) {
  size_t a = strlen(dir), b = strlen(name);
  int root = a == 1 && dir[0] == '/';
  char *out = malloc(a + b + 2);
  if (out == NULL) return NULL;
  memcpy(out, dir, a);
  size_t at = root ? a : a + 1;
  if (!root) out[a] = '/';
  memcpy(out + at, name, b + 1);
  return out;
}

static void fail(listing_t *l, int err, const char *syscall, const char *name) {
  l->err = err;
  l->syscall = syscall;
  l->err_path = name == NULL ? strdup(l->path) : join_path(l->path, name);
}

/* Room for `more` bytes at the end of the listing's text; -1 when memory ran out. */
static int reserve_text(listing_t *l, size_t more) {
  if (l->text_capacity - l->text_length >= more) return 0;
  size_t capacity = l->text_capacity == 0 ? 1024 : l->text_capacity;
  while (capacity - l->text_length < more) capacity *= 2;
  char *grown = realloc(l->text, capacity);
  if (grown == NULL) return -1;
  l->text = grown;
  l->text_capacity = capacity;
  return 0;
}

/* `name` (NUL-terminated) appended to the listing's text: its offset, or NO_TEXT when out of memory. */
static size_t add_text(listing_t *l, const char *name) {
  size_t n = strlen(name) + 1;
  if (reserve_text(l, n) != 0) return NO_TEXT;
  size_t at = l->text_length;
  memcpy(l->text + at, name, n);
  l->text_length += n;
  return at;
}

/* The target of the link `name` in `dir_fd`, appended to the listing's text: its offset, or NO_TEXT
   with errno set when it cannot be read. */
static size_t read_target(listing_t *l, int dir_fd, const char *name, size_t hint) {
  size_t size = hint > 0 ? hint + 1 : 256;
  for (;;) {
    if (reserve_text(l, size) != 0) {
      errno = ENOMEM;
      return NO_TEXT;
    }
    ssize_t n = readlinkat(dir_fd, name, l->text + l->text_length, size);
    if (n < 0) return NO_TEXT;
    if ((size_t)n < size) {
      size_t at = l->text_length;
      l->text[at + (size_t)n] = '\0';
      l->text_length += (size_t)n + 1;
      return at;
    }
    /* Truncated: the link changed since its stat; try again with room to spare. */
    size *= 2;
  }
}

static int push(listing_t *l, entry_t e) {
  if (l->count == l->capacity) {
    size_t capacity = l->capacity == 0 ? 32 : l->capacity * 2;
    entry_t *grown = realloc(l->entries, capacity * sizeof(entry_t));
    if (grown == NULL) return -1;
    l->entries = grown;
    l->capacity = capacity;
  }
  l->entries[l->count++] = e;
  return 0;
}

static int open_directory(const char *path, int root_fd) {
  if (root_fd < 0) {
    /* Only absolute paths: a relative one would resolve against the process's working directory. */
    if (path[0] != '/') {
      errno = EINVAL;
      return -1;
    }
    /* O_NOFOLLOW: the path was checked free of symlinks; one swapped in since is refused. */
    return open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
  }
#if defined(__linux__) && defined(SYS_openat2)
  if (path[0] == '\0') return fcntl(root_fd, F_DUPFD_CLOEXEC, 0);
  struct open_how how;
  memset(&how, 0, sizeof how);
  how.flags = O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW;
  how.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
  return (int)syscall(SYS_openat2, root_fd, path, &how, sizeof how);
#else
  errno = ENOSYS;
  return -1;
#endif
}

/* One entry of the directory `fd`: 0 when taken or gone since the listing, -1 when the listing
   failed on it (recorded in `l`). */
static int take_entry(listing_t *l, int fd, const char *name) {
  if (name[0] == '.' && (name[1] == '\0' || (name[1] == '.' && name[2] == '\0'))) return 0;
  struct stat s;
  if (fstatat(fd, name, &s, AT_SYMLINK_NOFOLLOW) != 0) {
    if (errno == ENOENT) return 0; /* gone since the listing */
    fail(l, errno, "lstat", name);
    return -1;
  }
  entry_t e = {
      .name = NO_TEXT,
      .target = NO_TEXT,
      .kind = kind_of(s.st_mode),
      .size = (double)s.st_size,
      .mode = (double)(s.st_mode & 07777),
      .mtime_ns = MTIME_NS(s),
      .ctime_ns = CTIME_NS(s),
      .inode = (uint64_t)s.st_ino,
  };
  size_t mark = l->text_length;
  if (S_ISLNK(s.st_mode)) {
    e.target = read_target(l, fd, name, (size_t)s.st_size);
    if (e.target == NO_TEXT) {
      if (errno == ENOENT) return 0;
      fail(l, errno, "readlink", name);
      return -1;
    }
  }
  e.name = add_text(l, name);
  if (e.name == NO_TEXT || push(l, e) != 0) {
    l->text_length = mark;
    fail(l, ENOMEM, "scandir", NULL);
    return -1;
  }
  return 0;
}

#if defined(__linux__) && defined(SYS_getdents64)
/* The kernel's directory record (what getdents64 fills its buffer with). */
struct dirent64_record {
  uint64_t d_ino;
  int64_t d_off;
  unsigned short d_reclen;
  unsigned char d_type;
  char d_name[];
};
#endif

/*
 * Lists the directory into `l`. On Linux the entries are read with getdents64 straight into
 * `buffer` (one per thread): `fdopendir` would add an fstat, two fcntl calls and a 32 KiB
 * allocation per directory, a third of a scan's system calls on a tree of small directories.
 */
static void list_directory(listing_t *l, int root_fd, char *buffer, size_t buffer_size) {
  int fd = open_directory(l->path, root_fd);
  if (fd < 0) {
    fail(l, errno, root_fd < 0 ? "scandir" : "openat2", NULL);
    return;
  }
#if defined(__linux__) && defined(SYS_getdents64)
  if (buffer != NULL) {
    for (;;) {
      long n = syscall(SYS_getdents64, fd, buffer, buffer_size);
      if (n < 0) {
        fail(l, errno, "scandir", NULL);
        break;
      }
      if (n == 0) break;
      int stop = 0;
      for (long at = 0; at < n && !stop;) {
        struct dirent64_record *d = (struct dirent64_record *)(buffer + at);
        at += d->d_reclen;
        stop = take_entry(l, fd, d->d_name) != 0;
      }
      if (stop) break;
    }
    close(fd);
    return;
  }
#else
  (void)buffer;
  (void)buffer_size;
#endif
  DIR *dir = fdopendir(fd);
  if (dir == NULL) {
    int e = errno;
    close(fd);
    fail(l, e, "scandir", NULL);
    return;
  }
  for (;;) {
    errno = 0;
    struct dirent *d = readdir(dir);
    if (d == NULL) {
      if (errno != 0) fail(l, errno, "scandir", NULL);
      break;
    }
    if (take_entry(l, fd, d->d_name) != 0) break;
  }
  closedir(dir);
}

#define FIXED_BYTES (3 * sizeof(double) + 2 * sizeof(int64_t) + sizeof(uint64_t))
/* What put_stat writes besides the target: size, mode, mtime, ctime, inode. */
#define STAT_BYTES (2 * sizeof(double) + 3 * sizeof(int64_t))

/* An entry's link target (a flag byte, then the target and NUL when there is one) and its stat
   fields, written at `at`: the part of an entry both byte forms of a listing share. */
static unsigned char *put_stat(unsigned char *at, const listing_t *l, const entry_t *e) {
  *at++ = e->target == NO_TEXT ? 0 : 1;
  if (e->target != NO_TEXT) {
    size_t n = strlen(l->text + e->target) + 1;
    memcpy(at, l->text + e->target, n);
    at += n;
  }
  memcpy(at, &e->size, sizeof(double));
  memcpy(at + 8, &e->mode, sizeof(double));
  memcpy(at + 16, &e->mtime_ns, sizeof(int64_t));
  memcpy(at + 24, &e->ctime_ns, sizeof(int64_t));
  memcpy(at + 32, &e->inode, sizeof(uint64_t));
  return at + STAT_BYTES;
}

/*
 * The listing as one byte string: per entry its name and NUL, a byte saying whether a target
 * follows (then the target and NUL), the stat fields and the kind. Names and targets hold no NUL,
 * so two listings are equal exactly when their bytes are.
 */
static void serialize(listing_t *l) {
  size_t length = 0;
  for (size_t i = 0; i < l->count; i++) {
    entry_t *e = &l->entries[i];
    length += strlen(l->text + e->name) + 2 + (e->target == NO_TEXT ? 0 : strlen(l->text + e->target) + 1) +
              FIXED_BYTES;
  }
  unsigned char *blob = malloc(length > 0 ? length : 1);
  if (blob == NULL) return; /* no blob: the listing is simply reported in full */
  unsigned char *at = blob;
  for (size_t i = 0; i < l->count; i++) {
    entry_t *e = &l->entries[i];
    size_t n = strlen(l->text + e->name) + 1;
    memcpy(at, l->text + e->name, n);
    at += n;
    at = put_stat(at, l, e);
    memcpy(at, &e->kind, sizeof(double));
    at += sizeof(double);
  }
  l->blob = blob;
  l->blob_length = length;
  l->same = l->previous != NULL && l->previous_length == length && memcmp(l->previous, blob, length) == 0;
}

#if defined(__linux__)
static int by_name(const void *a, const void *b, void *text) {
  return strcmp((const char *)text + ((const entry_t *)a)->name, (const char *)text + ((const entry_t *)b)->name);
}

/* Whether the entry `name` of the listing is one whose stat the seal leaves out (see sealBeneath). */
static int stat_free(const listing_t *l, const job_t *job, const char *name) {
  for (size_t i = 0; i < job->free_name_count; i++)
    if (strcmp(job->free_names[i], name) == 0) return 1;
  size_t a = strlen(l->path);
  for (size_t i = 0; i < job->free_path_count; i++) {
    const char *p = job->free_paths[i];
    if (a == 0 ? strcmp(p, name) == 0
               : strncmp(p, l->path, a) == 0 && p[a] == '/' && strcmp(p + a + 1, name) == 0)
      return 1;
  }
  return 0;
}


/*
 * The sealed form of a listing: its path and NUL, its entry count (8 bytes), then per entry in byte
 * order of names: the name and NUL, the kind (one byte) and, unless the entry is stat-free, a byte
 * saying whether a target follows (then it and NUL), size, mode, mtime, ctime and inode. Names,
 * paths and targets hold no NUL, so two sealed forms are equal exactly when the listings are. Only
 * its SHA-256 is kept (`digest`, with `newest_ctime`); the entries are left sorted by name. When
 * memory runs out the listing is simply not sealed (`sealed` stays 0): a scan's listing stands.
 */
static void seal_digest(listing_t *l, const job_t *job) {
  if (l->count > 1) qsort_r(l->entries, l->count, sizeof(entry_t), by_name, l->text);
  size_t length = strlen(l->path) + 1 + sizeof(uint64_t);
  for (size_t i = 0; i < l->count; i++) {
    entry_t *e = &l->entries[i];
    length += strlen(l->text + e->name) + 2;
    if (!stat_free(l, job, l->text + e->name))
      length += 1 + (e->target == NO_TEXT ? 0 : strlen(l->text + e->target) + 1) + STAT_BYTES;
  }
  unsigned char *blob = malloc(length);
  if (blob == NULL) return;
  unsigned char *at = blob;
  size_t n = strlen(l->path) + 1;
  memcpy(at, l->path, n);
  at += n;
  uint64_t count = l->count;
  memcpy(at, &count, sizeof count);
  at += sizeof count;
  l->newest_ctime = INT64_MIN;
  for (size_t i = 0; i < l->count; i++) {
    entry_t *e = &l->entries[i];
    const char *name = l->text + e->name;
    n = strlen(name) + 1;
    memcpy(at, name, n);
    at += n;
    *at++ = (unsigned char)e->kind;
    if (stat_free(l, job, name)) continue;
    at = put_stat(at, l, e);
    if (e->ctime_ns > l->newest_ctime) l->newest_ctime = e->ctime_ns;
  }
  SHA256(blob, length, l->digest);
  free(blob);
  l->sealed = 1;
}
#endif

/* The getdents64 buffer of one thread (NULL, when it cannot be had, takes the readdir way). */
#define DIRENT_BUFFER (64 * 1024)

static void *work(void *arg) {
  job_t *job = arg;
  char *buffer = malloc(DIRENT_BUFFER);
  for (;;) {
    size_t i = __atomic_fetch_add(&job->next, 1, __ATOMIC_RELAXED);
    if (i >= job->count) break;
    listing_t *l = &job->listings[i];
    list_directory(l, job->root_fd, buffer, DIRENT_BUFFER);
    if (l->err != 0) continue;
#if defined(__linux__)
    if (job->seal) seal_digest(l, job);
#endif
    if (job->keep) {
      serialize(l);
      continue;
    }
    /* Only the digest is kept until every directory is listed: a tree's entries and names held all
       at once would cost several times the bytes. */
    free(l->entries);
    free(l->text);
    l->entries = NULL;
    l->text = NULL;
    l->count = l->capacity = l->text_length = l->text_capacity = 0;
  }
  free(buffer);
  return NULL;
}

/* Runs `job` on `threads` threads (the calling one included); returns when every thread is done. */
static void run_job(job_t *job, int threads) {
  pthread_t helpers[MAX_THREADS];
  int started = 0;
  for (int t = 1; t < threads && t < MAX_THREADS; t++)
    if (pthread_create(&helpers[started], NULL, work, job) == 0) started++;
  work(job);
  for (int t = 0; t < started; t++) pthread_join(helpers[t], NULL);
}

static void free_listing(listing_t *l) {
  free(l->text);
  free(l->entries);
  free(l->path);
  free(l->err_path);
  free(l->blob);
}

#define CHECK(call)                                   \
  do {                                                \
    if ((call) != napi_ok) goto failed;               \
  } while (0)

static napi_status set(napi_env env, napi_value object, const char *key, napi_value value) {
  return napi_set_named_property(env, object, key, value);
}

/*
 * A typed array of `length` elements of `element_size` bytes, set as `key` on `object`; `*data` is
 * its memory, for the caller to fill (NULL when `length` is 0).
 */
static napi_status typed_property(napi_env env, napi_value object, const char *key, napi_typedarray_type type,
                                  size_t length, size_t element_size, void **data) {
  napi_value buffer, array;
  napi_status status = napi_create_arraybuffer(env, length * element_size, data, &buffer);
  if (status == napi_ok) status = napi_create_typedarray(env, type, length, buffer, 0, &array);
  if (status == napi_ok) status = set(env, object, key, array);
  return status;
}

/* Whether `s` (NUL-terminated) is well-formed UTF-8: no stray continuation, overlong form,
   surrogate or code point past U+10FFFF. */
static int valid_utf8(const unsigned char *s) {
  while (*s != 0) {
    unsigned char c = *s;
    if (c < 0x80) {
      s++;
      continue;
    }
    int n;
    uint32_t cp, min;
    if ((c & 0xE0) == 0xC0) n = 1, cp = c & 0x1F, min = 0x80;
    else if ((c & 0xF0) == 0xE0) n = 2, cp = c & 0x0F, min = 0x800;
    else if ((c & 0xF8) == 0xF0) n = 3, cp = c & 0x07, min = 0x10000;
    else return 0;
    for (int k = 1; k <= n; k++) {
      if ((s[k] & 0xC0) != 0x80) return 0;
      cp = (cp << 6) | (s[k] & 0x3F);
    }
    if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
    s += n + 1;
  }
  return 1;
}

/* A name as JavaScript gets it: a string, or a Buffer of its bytes when it is not UTF-8. */
static napi_status name_value(napi_env env, const char *name, napi_value *out) {
  if (valid_utf8((const unsigned char *)name)) return napi_create_string_utf8(env, name, NAPI_AUTO_LENGTH, out);
  return napi_create_buffer_copy(env, strlen(name), name, NULL, out);
}

static napi_value to_js(napi_env env, listing_t *l) {
  napi_value out, value;
  if (napi_create_object(env, &out) != napi_ok) return NULL;
  if (l->err != 0) {
    CHECK(napi_create_int32(env, l->err, &value));
    CHECK(set(env, out, "errno", value));
    CHECK(napi_create_string_utf8(env, l->syscall, NAPI_AUTO_LENGTH, &value));
    CHECK(set(env, out, "syscall", value));
    CHECK(napi_create_string_utf8(env, l->err_path, NAPI_AUTO_LENGTH, &value));
    CHECK(set(env, out, "path", value));
    return out;
  }
  if (l->same) {
    napi_value same;
    if (napi_get_boolean(env, true, &same) != napi_ok) return NULL;
    return same;
  }
  size_t n = l->count;
  napi_value names, targets, buffer;
  void *data;
  if (l->blob != NULL) {
    CHECK(napi_create_arraybuffer(env, l->blob_length, &data, &buffer));
    if (l->blob_length > 0) memcpy(data, l->blob, l->blob_length);
    CHECK(set(env, out, "blob", buffer));
  }
  CHECK(napi_create_array_with_length(env, n, &names));
  CHECK(napi_create_array_with_length(env, n, &targets));
  for (size_t i = 0; i < n; i++) {
    CHECK(name_value(env, l->text + l->entries[i].name, &value));
    CHECK(napi_set_element(env, names, (uint32_t)i, value));
    if (l->entries[i].target != NO_TEXT) {
      CHECK(napi_create_string_utf8(env, l->text + l->entries[i].target, NAPI_AUTO_LENGTH, &value));
      CHECK(napi_set_element(env, targets, (uint32_t)i, value));
    }
  }
  CHECK(set(env, out, "names", names));
  CHECK(set(env, out, "targets", targets));

  double *numbers;
  int64_t *times;
  uint64_t *inodes;
  CHECK(typed_property(env, out, "numbers", napi_float64_array, n * 3, sizeof(double), (void **)&numbers));
  CHECK(typed_property(env, out, "times", napi_bigint64_array, n * 2, sizeof(int64_t), (void **)&times));
  CHECK(typed_property(env, out, "inodes", napi_biguint64_array, n, sizeof(uint64_t), (void **)&inodes));
  for (size_t i = 0; i < n; i++) {
    entry_t *e = &l->entries[i];
    numbers[3 * i] = e->kind;
    numbers[3 * i + 1] = e->size;
    numbers[3 * i + 2] = e->mode;
    times[2 * i] = e->mtime_ns;
    times[2 * i + 1] = e->ctime_ns;
    inodes[i] = e->inode;
  }
  return out;
failed:
  return NULL;
}

static napi_value throw_error(napi_env env, const char *message) {
  napi_throw_error(env, NULL, message);
  return NULL;
}

/* A JavaScript string as a fresh C string; NULL (with an exception pending) when it is not one. */
static char *string_of(napi_env env, napi_value value) {
  size_t length = 0;
  if (napi_get_value_string_utf8(env, value, NULL, 0, &length) != napi_ok) {
    throw_error(env, "dirscan: a path must be a string");
    return NULL;
  }
  char *out = malloc(length + 1);
  if (out == NULL) {
    throw_error(env, "dirscan: out of memory");
    return NULL;
  }
  napi_get_value_string_utf8(env, value, out, length + 1, &length);
  if (strlen(out) != length) {
    free(out);
    throw_error(env, "dirscan: a path holds a NUL character");
    return NULL;
  }
  return out;
}

#if defined(__linux__) && defined(SYS_openat2)
/* The strings of a JavaScript array as C strings (`*count` of them); NULL with an exception pending
   when it is not an array of strings. An empty array gives a non-NULL empty list. */
static char **strings_of(napi_env env, napi_value array, size_t *count) {
  bool is_array = false;
  uint32_t n = 0;
  if (napi_is_array(env, array, &is_array) != napi_ok || !is_array) {
    throw_error(env, "dirscan: an array of strings expected");
    return NULL;
  }
  napi_get_array_length(env, array, &n);
  char **out = calloc(n > 0 ? n : 1, sizeof(char *));
  if (out == NULL) {
    throw_error(env, "dirscan: out of memory");
    return NULL;
  }
  for (uint32_t i = 0; i < n; i++) {
    napi_value element;
    /* string_of throws (leaves an exception pending) for what is not a string. */
    if (napi_get_element(env, array, i, &element) != napi_ok || (out[i] = string_of(env, element)) == NULL) {
      for (uint32_t j = 0; j < i; j++) free(out[j]);
      free(out);
      bool pending = false;
      napi_is_exception_pending(env, &pending);
      if (!pending) throw_error(env, "dirscan: an array of strings expected");
      return NULL;
    }
  }
  *count = n;
  return out;
}

static void free_strings(char **strings, size_t count) {
  if (strings == NULL) return;
  for (size_t i = 0; i < count; i++) free(strings[i]);
  free(strings);
}
#endif

/*
 * The seal part of an answer, set on `out`: `checks` (SEAL_CHECK_BYTES a listing, zero where it was
 * not sealed), `newestByDirectory` (an int64 a listing, INT64_MIN where not sealed) and `failed`
 * (the indices of the listings not sealed: not listed, or out of memory).
 */
static napi_status seal_result(napi_env env, napi_value out, listing_t *listings, size_t count) {
  napi_value failed, index, checks_buffer, newest_buffer;
  unsigned char *checks = NULL;
  int64_t *newest_of = NULL;
  napi_status status = napi_create_array(env, &failed);
  if (status == napi_ok)
    status = napi_create_arraybuffer(env, count * SEAL_CHECK_BYTES, (void **)&checks, &checks_buffer);
  if (status == napi_ok)
    status = napi_create_arraybuffer(env, count * sizeof(int64_t), (void **)&newest_of, &newest_buffer);
  if (status != napi_ok) return status;
  uint32_t failures = 0;
  for (size_t i = 0; i < count && status == napi_ok; i++) {
    listing_t *l = &listings[i];
    int sealed = l->err == 0 && l->sealed;
    if (sealed) memcpy(checks + SEAL_CHECK_BYTES * i, l->digest, SEAL_CHECK_BYTES);
    else memset(checks + SEAL_CHECK_BYTES * i, 0, SEAL_CHECK_BYTES);
    newest_of[i] = sealed ? l->newest_ctime : INT64_MIN;
    if (!sealed) {
      status = napi_create_uint32(env, (uint32_t)i, &index);
      if (status == napi_ok) status = napi_set_element(env, failed, failures++, index);
    }
  }
  if (status == napi_ok) status = set(env, out, "checks", checks_buffer);
  if (status == napi_ok) status = set(env, out, "newestByDirectory", newest_buffer);
  if (status == napi_ok) status = set(env, out, "failed", failed);
  return status;
}

/*
 * The listings of `paths` to take, each with the previous bytes the caller kept for it (`previous`,
 * an array of ArrayBuffer or holes): the buffers are not copied, so the caller keeps them alive and
 * unchanged until the listings are taken. NULL (with an exception pending) when `paths` is not an
 * array of strings.
 */
static listing_t *listings_of(napi_env env, napi_value paths, napi_value previous, uint32_t *count_out) {
  bool is_array = false;
  if (napi_is_array(env, paths, &is_array) != napi_ok || !is_array) {
    throw_error(env, "dirscan: paths must be an array of strings");
    return NULL;
  }
  uint32_t count = 0;
  napi_get_array_length(env, paths, &count);
  listing_t *listings = calloc(count > 0 ? count : 1, sizeof(listing_t));
  if (listings == NULL) {
    throw_error(env, "dirscan: out of memory");
    return NULL;
  }
  /* Only an array is read for previous bytes: reading an element of anything else (undefined, a
     caller that kept none) would leave an exception pending. */
  bool has_previous = false;
  if (previous != NULL && napi_is_array(env, previous, &has_previous) != napi_ok) has_previous = false;
  for (uint32_t i = 0; i < count; i++) {
    napi_value element;
    if (napi_get_element(env, paths, i, &element) != napi_ok) {
      throw_error(env, "dirscan: paths must be an array of strings");
      goto failed;
    }
    listings[i].path = string_of(env, element);
    if (listings[i].path == NULL) goto failed;
    napi_value before;
    bool is_buffer = false;
    if (has_previous && napi_get_element(env, previous, i, &before) == napi_ok &&
        napi_is_arraybuffer(env, before, &is_buffer) == napi_ok && is_buffer) {
      void *data = NULL;
      size_t length = 0;
      if (napi_get_arraybuffer_info(env, before, &data, &length) == napi_ok) {
        listings[i].previous = data;
        listings[i].previous_length = length;
      }
    }
  }
  *count_out = count;
  return listings;
failed:
  for (uint32_t i = 0; i < count; i++) free_listing(&listings[i]);
  free(listings);
  return NULL;
}

static int32_t threads_of(napi_env env, napi_value value, uint32_t count) {
  int32_t threads = 1;
  if (value != NULL) napi_get_value_int32(env, value, &threads);
  if (threads < 1) threads = 1;
  if (threads > MAX_THREADS) threads = MAX_THREADS;
  if ((uint32_t)threads > count) threads = count > 0 ? (int32_t)count : 1;
  return threads;
}

/*
 * The answer for listings taken by a job: an array of Listing | Failure | true, or, when the job
 * sealed them, { listings, checks, newestByDirectory, failed } (see seal_result). NULL with an
 * exception pending when it could not be built.
 */
static napi_value answer_of(napi_env env, listing_t *listings, uint32_t count, int sealed) {
  napi_value result;
  if (napi_create_array_with_length(env, count, &result) != napi_ok) goto failed;
  for (uint32_t i = 0; i < count; i++) {
    napi_value listing = to_js(env, &listings[i]);
    if (listing == NULL || napi_set_element(env, result, i, listing) != napi_ok) goto failed;
  }
  if (sealed) {
    napi_value out;
    if (napi_create_object(env, &out) != napi_ok || set(env, out, "listings", result) != napi_ok ||
        seal_result(env, out, listings, count) != napi_ok)
      goto failed;
    result = out;
  }
  return result;
failed:;
  bool pending = false;
  napi_is_exception_pending(env, &pending);
  if (!pending) throw_error(env, "dirscan: could not build the result");
  return NULL;
}

/* Lists absolute `paths` on up to `threads` threads, against the `previous` bytes (`scan`). */
static napi_value run(napi_env env, napi_value paths, napi_value threads_value, napi_value previous) {
  uint32_t count = 0;
  listing_t *listings = listings_of(env, paths, previous, &count);
  if (listings == NULL) return NULL;
  job_t job = {.listings = listings, .count = count, .next = 0, .root_fd = -1, .keep = 1};
  run_job(&job, threads_of(env, threads_value, count));
  napi_value result = answer_of(env, listings, count, 0);
  for (uint32_t i = 0; i < count; i++) free_listing(&listings[i]);
  free(listings);
  return result;
}

static napi_value scan(napi_env env, napi_callback_info info) {
  size_t argc = 3;
  napi_value argv[3] = {NULL, NULL, NULL};
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc < 1)
    return throw_error(env, "scan(paths, threads, previous): paths expected");
  return run(env, argv[0], argv[1], argc >= 3 ? argv[2] : NULL);
}

#if defined(__linux__) && defined(SYS_openat2)
/* One call of scanBeneath or scanBeneathAsync: its job and, for the async one, its work. */
typedef struct {
  job_t job;
  int32_t threads;
  napi_async_work work;
  napi_deferred deferred;
  napi_ref previous; /* scanBeneathAsync: keeps the previous buffers alive while the job runs */
} scan_call_t;

static void free_scan_call(napi_env env, scan_call_t *c) {
  if (c->job.listings != NULL) {
    for (size_t i = 0; i < c->job.count; i++) free_listing(&c->job.listings[i]);
    free(c->job.listings);
  }
  if (c->job.root_fd >= 0) close(c->job.root_fd);
  free_strings(c->job.free_names, c->job.free_name_count);
  free_strings(c->job.free_paths, c->job.free_path_count);
  if (c->previous != NULL) napi_delete_reference(env, c->previous);
  free(c);
}

/*
 * A call over `relatives` beneath `root` (JavaScript values): sealed when `names` and `paths` (the
 * stat-free ones) are given, its listings handed to JavaScript when `keep`; `previous` as for
 * scanBeneath (may be NULL). Its root_fd is -1 when the root cannot be opened (nothing to list: the
 * answer is null). NULL with an exception pending for bad arguments.
 */
static scan_call_t *new_scan_call(napi_env env, napi_value root_value, napi_value relatives, napi_value threads,
                                  napi_value previous, napi_value names, napi_value paths, int keep) {
  scan_call_t *c = calloc(1, sizeof *c);
  if (c == NULL) {
    throw_error(env, "dirscan: out of memory");
    return NULL;
  }
  c->job.root_fd = -1;
  c->job.keep = keep;
  if (names != NULL && paths != NULL) {
    c->job.seal = 1;
    c->job.free_names = strings_of(env, names, &c->job.free_name_count);
    if (c->job.free_names == NULL) goto failed;
    c->job.free_paths = strings_of(env, paths, &c->job.free_path_count);
    if (c->job.free_paths == NULL) goto failed;
  }
  char *root = string_of(env, root_value);
  if (root == NULL) goto failed;
  /* Never fall back to opening relative paths from here: they would resolve against the cwd. The
     caller takes the checked way for every directory instead. */
  c->job.root_fd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
  free(root);
  if (c->job.root_fd < 0) return c;
  uint32_t count = 0;
  c->job.listings = listings_of(env, relatives, previous, &count);
  if (c->job.listings == NULL) goto failed;
  c->job.count = count;
  c->threads = threads_of(env, threads, count);
  return c;
failed:
  free_scan_call(env, c);
  return NULL;
}

/* The call scanBeneath's arguments (root, relatives, threads, previous, statFreeNames?,
   statFreePaths?) describe (see new_scan_call); `*previous` is set to the previous argument. */
static scan_call_t *scan_call_of(napi_env env, napi_callback_info info, napi_value *previous) {
  size_t argc = 6;
  napi_value argv[6] = {NULL, NULL, NULL, NULL, NULL, NULL};
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc < 2) {
    throw_error(env, "scanBeneath(root, relatives, threads, previous, statFreeNames?, statFreePaths?): "
                     "root and relatives expected");
    return NULL;
  }
  *previous = argc >= 4 ? argv[3] : NULL;
  return new_scan_call(env, argv[0], argv[1], argv[2], *previous, argc >= 6 ? argv[4] : NULL,
                       argc >= 6 ? argv[5] : NULL, 1);
}

static napi_value scan_beneath(napi_env env, napi_callback_info info) {
  napi_value previous, result = NULL;
  scan_call_t *c = scan_call_of(env, info, &previous);
  if (c == NULL) return NULL;
  if (c->job.root_fd < 0) napi_get_null(env, &result);
  else {
    run_job(&c->job, c->threads);
    result = answer_of(env, c->job.listings, (uint32_t)c->job.count, c->job.seal);
  }
  free_scan_call(env, c);
  return result;
}

static void scan_call_execute(napi_env env, void *data) {
  scan_call_t *c = data;
  run_job(&c->job, c->threads);
}

static void scan_call_complete(napi_env env, napi_status status, void *data) {
  scan_call_t *c = data;
  napi_value result = NULL;
  if (status == napi_ok) result = answer_of(env, c->job.listings, (uint32_t)c->job.count, c->job.seal);
  if (result != NULL) napi_resolve_deferred(env, c->deferred, result);
  else {
    napi_value error = NULL;
    bool pending = false;
    if (napi_is_exception_pending(env, &pending) == napi_ok && pending)
      napi_get_and_clear_last_exception(env, &error);
    if (error == NULL) {
      napi_value message;
      napi_create_string_utf8(env, "scanBeneathAsync: the listings could not be taken", NAPI_AUTO_LENGTH, &message);
      napi_create_error(env, NULL, message, &error);
    }
    napi_reject_deferred(env, c->deferred, error);
  }
  napi_delete_async_work(env, c->work);
  free_scan_call(env, c);
}

/*
 * scanBeneathAsync: scanBeneath on a thread of libuv's pool (and its helpers), answered by a
 * promise, so the caller's thread takes in one wave of a scan while the next is listed. The
 * previous buffers are held (a reference to their array) until the listings are taken.
 */
static napi_value scan_beneath_async(napi_env env, napi_callback_info info) {
  napi_value previous, promise, name, none;
  scan_call_t *c = scan_call_of(env, info, &previous);
  if (c == NULL) return NULL;
  if (napi_create_promise(env, &c->deferred, &promise) != napi_ok) {
    free_scan_call(env, c);
    return throw_error(env, "scanBeneathAsync: no promise");
  }
  if (c->job.root_fd < 0) {
    napi_get_null(env, &none);
    napi_resolve_deferred(env, c->deferred, none);
    free_scan_call(env, c);
    return promise;
  }
  napi_valuetype type = napi_undefined;
  if (previous != NULL && napi_typeof(env, previous, &type) == napi_ok && type == napi_object &&
      napi_create_reference(env, previous, 1, &c->previous) != napi_ok) {
    free_scan_call(env, c);
    return throw_error(env, "scanBeneathAsync: could not hold the previous listings");
  }
  napi_create_string_utf8(env, "rewind.scanBeneath", NAPI_AUTO_LENGTH, &name);
  if (napi_create_async_work(env, NULL, name, scan_call_execute, scan_call_complete, c, &c->work) != napi_ok ||
      napi_queue_async_work(env, c->work) != napi_ok) {
    free_scan_call(env, c);
    return throw_error(env, "scanBeneathAsync: could not queue the listings");
  }
  return promise;
}
#endif

#if defined(__linux__) && defined(SYS_openat2)

/*
 * sealBeneath(root, relatives, threads, statFreeNames, statFreePaths)
 *   -> { checks: ArrayBuffer, failed: number[], newestByDirectory: ArrayBuffer (an int64 a
 *        directory) } | null (the root cannot be opened)
 * Lists each directory beneath the root as scanBeneath does (openat2, no symlink on the way),
 * puts each listing in its sealed form (see seal_digest) and keeps only the first
 * SEAL_CHECK_BYTES of that form's SHA-256 (from the OpenSSL Node exports) as the listing's check,
 * what a capture keeps so that a later one can tell, without building anything per entry, which
 * directories changed. An entry named in `statFreeNames`, or whose path is in `statFreePaths`, is
 * sealed by name and kind only (Rewind's store and `.git`, whose stats change under every capture
 * and every git command, and whose contents no capture records). `newestByDirectory` is, per
 * listing, the newest ctime of the other entries (the caller's racy check; INT64_MIN for an empty
 * or failed one). Every directory is listed: one that cannot be
 * (gone, replaced, unreadable) is no failure but gets a zero check, and its index is in `failed`.
 */
static napi_value seal_beneath(napi_env env, napi_callback_info info) {
  size_t argc = 5;
  napi_value argv[5] = {NULL, NULL, NULL, NULL, NULL};
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc < 5)
    return throw_error(env, "sealBeneath(root, relatives, threads, statFreeNames, statFreePaths) expected");
  scan_call_t *c = new_scan_call(env, argv[0], argv[1], argv[2], NULL, argv[3], argv[4], 0);
  if (c == NULL) return NULL;
  napi_value result = NULL;
  if (c->job.root_fd < 0) napi_get_null(env, &result);
  else {
    run_job(&c->job, c->threads);
    if (napi_create_object(env, &result) != napi_ok ||
        seal_result(env, result, c->job.listings, c->job.count) != napi_ok) {
      result = NULL;
      throw_error(env, "dirscan: could not build the result");
    }
  }
  free_scan_call(env, c);
  return result;
}
#endif

/* ---- kernel-confined file operations ---- */

/* Opens `relative` (no leading `/`; "" is `root_fd` itself) beneath `root_fd`, no symlink followed
   anywhere on the way; -errno on failure, -ELOOP for a symlink on the way. */
char *dirscan_js_string(napi_env env, napi_value value, size_t *length) {
  size_t size;
  if (napi_get_value_string_utf8(env, value, NULL, 0, &size) != napi_ok) return NULL;
  char *out = malloc(size + 1);
  if (out == NULL) return NULL;
  if (napi_get_value_string_utf8(env, value, out, size + 1, &size) != napi_ok) {
    free(out);
    return NULL;
  }
  if (length != NULL) *length = size;
  return out;
}

int dirscan_open_beneath(int root_fd, const char *relative, int walk) {
  (void)walk; /* only consulted where openat2 exists */
  const int flags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;
  if (relative[0] == '\0') {
    int fd = fcntl(root_fd, F_DUPFD_CLOEXEC, 0);
    return fd < 0 ? -errno : fd;
  }
  if (relative[0] == '/') return -EINVAL;
#if defined(__linux__) && defined(SYS_openat2)
  struct open_how how;
  memset(&how, 0, sizeof how);
  how.flags = flags;
  how.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
  for (int attempt = 0; !walk && attempt < 8; attempt++) {
    int fd = (int)syscall(SYS_openat2, root_fd, relative, &how, sizeof how);
    if (fd >= 0) return fd;
    /* EAGAIN: the kernel saw a concurrent rename and asks to try again. */
    if (errno == EAGAIN) continue;
    /* A link in the last component reads ENOTDIR (O_DIRECTORY is checked first): the walk below
       tells a link (ELOOP) from a file in the way (ENOTDIR), as confined as this call. */
    if (errno != ENOSYS && errno != ENOTDIR) return -errno;
    break;
  }
#endif
  /* No openat2: walk the components, each opened relative to the last without following it. */
  char *copy = strdup(relative);
  if (copy == NULL) return -ENOMEM;
  int fd = fcntl(root_fd, F_DUPFD_CLOEXEC, 0);
  if (fd < 0) {
    int e = errno;
    free(copy);
    return -e;
  }
  char *save = NULL;
  for (char *component = strtok_r(copy, "/", &save); component != NULL; component = strtok_r(NULL, "/", &save)) {
    if (strcmp(component, ".") == 0 || strcmp(component, "..") == 0) {
      close(fd);
      free(copy);
      return -EINVAL;
    }
    int next = openat(fd, component, flags);
    if (next < 0) {
      int e = errno;
      struct stat s;
      /* O_NOFOLLOW with O_DIRECTORY says ENOTDIR or ELOOP for a link, depending on the system. */
      if ((e == ENOTDIR || e == ELOOP) && fstatat(fd, component, &s, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(s.st_mode))
        e = ELOOP;
      close(fd);
      free(copy);
      return -e;
    }
    close(fd);
    fd = next;
  }
  free(copy);
  return fd;
}

/* A string argument as a fresh C string (NULL, with an exception pending, when it is not one). */
static char *string_arg(napi_env env, napi_value *argv, size_t argc, size_t i) {
  if (i >= argc) {
    throw_error(env, "dirscan: missing argument");
    return NULL;
  }
  return string_of(env, argv[i]);
}

static int int_arg(napi_env env, napi_value *argv, size_t argc, size_t i, int32_t *out) {
  if (i >= argc || napi_get_value_int32(env, argv[i], out) != napi_ok) {
    throw_error(env, "dirscan: an integer argument expected");
    return -1;
  }
  return 0;
}

/* One path component: no separator, not empty, not `.` or `..`. */
static int is_component(const char *name) {
  return name[0] != '\0' && strchr(name, '/') == NULL && strcmp(name, ".") != 0 && strcmp(name, "..") != 0;
}

static napi_value number(napi_env env, int value) {
  napi_value out;
  return napi_create_int32(env, value, &out) == napi_ok ? out : NULL;
}

#define ARGS(n)                                                     \
  size_t argc = n;                                                  \
  napi_value argv[n];                                               \
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok) \
    return throw_error(env, "dirscan: bad arguments")

static napi_value open_dir_beneath(napi_env env, napi_callback_info info) {
  ARGS(3);
  bool walk = false;
  if (argc >= 3) napi_get_value_bool(env, argv[2], &walk);
  char *root = string_arg(env, argv, argc, 0);
  if (root == NULL) return NULL;
  char *relative = string_arg(env, argv, argc, 1);
  if (relative == NULL) {
    free(root);
    return NULL;
  }
  int result;
  int root_fd = root[0] == '/' ? open(root, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC) : -1;
  if (root[0] != '/') result = -EINVAL;
  else if (root_fd < 0) result = -errno;
  else {
    result = dirscan_open_beneath(root_fd, relative, walk);
    close(root_fd);
  }
  free(root);
  free(relative);
  return number(env, result);
}

static napi_value open_at(napi_env env, napi_callback_info info) {
  ARGS(4);
  int32_t dirfd, flags, mode;
  if (int_arg(env, argv, argc, 0, &dirfd) != 0) return NULL;
  char *name = string_arg(env, argv, argc, 1);
  if (name == NULL) return NULL;
  if (int_arg(env, argv, argc, 2, &flags) != 0 || int_arg(env, argv, argc, 3, &mode) != 0) {
    free(name);
    return NULL;
  }
  int fd = is_component(name) ? openat(dirfd, name, flags | O_NOFOLLOW | O_CLOEXEC, (mode_t)mode) : (errno = EINVAL, -1);
  int e = errno;
  free(name);
  return number(env, fd < 0 ? -e : fd);
}

static napi_value rename_at(napi_env env, napi_callback_info info) {
  ARGS(3);
  int32_t dirfd;
  if (int_arg(env, argv, argc, 0, &dirfd) != 0) return NULL;
  char *from = string_arg(env, argv, argc, 1);
  if (from == NULL) return NULL;
  char *to = string_arg(env, argv, argc, 2);
  if (to == NULL) {
    free(from);
    return NULL;
  }
  int r = is_component(from) && is_component(to) ? renameat(dirfd, from, dirfd, to) : (errno = EINVAL, -1);
  int e = errno;
  free(from);
  free(to);
  return number(env, r < 0 ? -e : 0);
}

/* unlinkat(dirfd, name, flags) for one path component: 0 or -errno. */
static napi_value remove_at(napi_env env, napi_callback_info info, int flags) {
  ARGS(2);
  int32_t dirfd;
  if (int_arg(env, argv, argc, 0, &dirfd) != 0) return NULL;
  char *name = string_arg(env, argv, argc, 1);
  if (name == NULL) return NULL;
  int r = is_component(name) ? unlinkat(dirfd, name, flags) : (errno = EINVAL, -1);
  int e = errno;
  free(name);
  return number(env, r < 0 ? -e : 0);
}

/* Removes a file or a link itself (never a directory, never a link's target). */
static napi_value unlink_at(napi_env env, napi_callback_info info) { return remove_at(env, info, 0); }

/* Removes an empty directory (never a file, never a link's target): what a failed restore created. */
static napi_value rmdir_at(napi_env env, napi_callback_info info) { return remove_at(env, info, AT_REMOVEDIR); }

static napi_value mkdir_at(napi_env env, napi_callback_info info) {
  ARGS(3);
  int32_t dirfd, mode;
  if (int_arg(env, argv, argc, 0, &dirfd) != 0) return NULL;
  char *name = string_arg(env, argv, argc, 1);
  if (name == NULL) return NULL;
  if (int_arg(env, argv, argc, 2, &mode) != 0) {
    free(name);
    return NULL;
  }
  int r = is_component(name) ? mkdirat(dirfd, name, (mode_t)mode) : (errno = EINVAL, -1);
  int e = errno;
  if (r < 0 && e == EEXIST) {
    /* A directory already there is success; a link there (swapped in) is a link on the way. */
    struct stat s;
    if (fstatat(dirfd, name, &s, AT_SYMLINK_NOFOLLOW) == 0) {
      if (S_ISDIR(s.st_mode)) r = 0;
      else if (S_ISLNK(s.st_mode)) e = ELOOP;
    }
  }
  free(name);
  return number(env, r < 0 ? -e : 0);
}

static napi_value symlink_at(napi_env env, napi_callback_info info) {
  ARGS(3);
  char *target = string_arg(env, argv, argc, 0);
  if (target == NULL) return NULL;
  int32_t dirfd;
  if (int_arg(env, argv, argc, 1, &dirfd) != 0) {
    free(target);
    return NULL;
  }
  char *name = string_arg(env, argv, argc, 2);
  if (name == NULL) {
    free(target);
    return NULL;
  }
  int r = is_component(name) ? symlinkat(target, dirfd, name) : (errno = EINVAL, -1);
  int e = errno;
  free(target);
  free(name);
  return number(env, r < 0 ? -e : 0);
}

#if defined(__linux__) && defined(SYS_openat2)

/* An O_PATH descriptor of the absolute `path`, no link followed anywhere on it (-1 and errno). */
static int open_path_nofollow(const char *path, int flags) {
  struct open_how how;
  memset(&how, 0, sizeof how);
  how.flags = O_PATH | O_NOFOLLOW | O_CLOEXEC | flags;
  how.resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
  for (int attempt = 0; attempt < 8; attempt++) {
    int fd = (int)syscall(SYS_openat2, AT_FDCWD, path, &how, sizeof how);
    /* EAGAIN: the kernel saw a concurrent rename and asks to try again. */
    if (fd >= 0 || errno != EAGAIN) return fd;
  }
  return -1;
}

/*
 * probePath(path) -> number | string
 *   What is at the absolute `path` (under a workspace root with no link in it), the kernel walking
 *   every component without following a link, the last one included (openat2 with
 *   RESOLVE_NO_SYMLINKS and O_PATH | O_NOFOLLOW, then fstat): 1 a file, 2 a directory, 3 another
 *   kind, the target (a string) for a link, 0 nothing at the last component while its parent is a
 *   directory reached the same way. Anything else is a negative errno: a link, a file or nothing
 *   where a directory is on the way, a target that is not UTF-8 (-EILSEQ), a failure. The caller
 *   then walks the components itself, an lstat each, which says which and refuses as it always
 *   did; this call only answers, in one, the common case that walk would answer after an lstat per
 *   component (core's resolveConfined: every workspace operation's confinement check).
 */
static napi_value probe_path(napi_env env, napi_callback_info info) {
  ARGS(1);
  char *path = string_arg(env, argv, argc, 0);
  if (path == NULL) return NULL;
  napi_value result = NULL;
  int fd = path[0] == '/' ? open_path_nofollow(path, 0) : (errno = EINVAL, -1);
  if (fd < 0) {
    int e = errno;
    char *slash = e == ENOENT ? strrchr(path, '/') : NULL;
    if (slash != NULL && slash != path && slash[1] != '\0') {
      /* Nothing at the last component, or a directory missing on the way: its parent says which. */
      *slash = '\0';
      int parent = open_path_nofollow(path, O_DIRECTORY);
      if (parent >= 0) {
        close(parent);
        result = number(env, 0);
      }
    }
    free(path);
    return result != NULL ? result : number(env, -e);
  }
  struct stat st;
  if (fstat(fd, &st) != 0) result = number(env, -errno);
  else if (!S_ISLNK(st.st_mode)) result = number(env, S_ISDIR(st.st_mode) ? 2 : S_ISREG(st.st_mode) ? 1 : 3);
  else {
    /* st_size is the target's length (0 on some pseudo filesystems); one more byte tells a target
       that grew since, which goes the walked way. */
    size_t size = st.st_size > 0 ? (size_t)st.st_size + 1 : 4096;
    char *target = malloc(size);
    ssize_t n = target == NULL ? (errno = ENOMEM, -1) : readlinkat(fd, "", target, size);
    if (n < 0) result = number(env, -errno);
    else if ((size_t)n >= size) result = number(env, -ENAMETOOLONG);
    else {
      target[n] = '\0';
      napi_value text;
      result = valid_utf8((const unsigned char *)target) &&
                       napi_create_string_utf8(env, target, (size_t)n, &text) == napi_ok
                   ? text
                   : number(env, -EILSEQ);
    }
    free(target);
  }
  close(fd);
  free(path);
  return result;
}
#endif

static int export_function(napi_env env, napi_value exports, const char *name, napi_callback fn) {
  napi_value value;
  if (napi_create_function(env, name, NAPI_AUTO_LENGTH, fn, NULL, &value) != napi_ok) return -1;
  return napi_set_named_property(env, exports, name, value) == napi_ok ? 0 : -1;
}

/* The workspace watcher (`watch.c`). */
int export_watch(napi_env env, napi_value exports);
/* A capture's bulk reads on a pool thread (`readbatch.c`). */
int export_read_batch(napi_env env, napi_value exports);

NAPI_MODULE_INIT() {
  if (export_function(env, exports, "scan", scan) != 0) return NULL;
  if (export_watch(env, exports) != 0) return NULL;
  if (export_read_batch(env, exports) != 0) return NULL;
  if (export_function(env, exports, "openDirBeneath", open_dir_beneath) != 0 ||
      export_function(env, exports, "openAt", open_at) != 0 ||
      export_function(env, exports, "renameAt", rename_at) != 0 ||
      export_function(env, exports, "unlinkAt", unlink_at) != 0 ||
      export_function(env, exports, "rmdirAt", rmdir_at) != 0 ||
      export_function(env, exports, "mkdirAt", mkdir_at) != 0 ||
      export_function(env, exports, "symlinkAt", symlink_at) != 0)
    return NULL;
#if defined(__linux__) && defined(SYS_openat2)
  if (export_function(env, exports, "scanBeneath", scan_beneath) != 0 ||
      export_function(env, exports, "scanBeneathAsync", scan_beneath_async) != 0 ||
      export_function(env, exports, "sealBeneath", seal_beneath) != 0 ||
      export_function(env, exports, "probePath", probe_path) != 0)
    return NULL;
#endif
  return exports;
}
