/*
 * dirscan: the bulk directory listing a snapshot scan is built on, in one call from JavaScript.
 *
 * A capture of a large workspace lists every directory and `lstat`s every entry. Through Node's
 * `fs` each entry costs a JavaScript call, a Stats object and a full-path lookup in the kernel;
 * here each directory is opened once and its entries are `fstatat`ed relative to it (never
 * following a symlink), spread over a few threads, and the results come back packed in typed
 * arrays. Nothing is written: the module only reads directories, stats and link targets.
 *
 * scan(paths: string[], threads: number) -> Array<Listing | Failure>
 *   Listing: { names: string[], numbers: Float64Array [kind, size, mode] per entry,
 *              times: BigInt64Array [mtimeNs, ctimeNs] per entry, inodes: BigUint64Array,
 *              targets: Array (a symlink's target at its index, otherwise a hole) }
 *   Failure: { errno: number, syscall: string, path: string }
 * kind: 0 file, 1 directory, 2 symlink, 3 other. An entry that vanishes between the listing and
 * its stat (or its readlink) is left out, as the JavaScript scanner does.
 */
#define _GNU_SOURCE
#define NAPI_VERSION 8
#include <node_api.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#ifdef __APPLE__
#define MTIME_NS(s) ((int64_t)(s).st_mtimespec.tv_sec * 1000000000LL + (s).st_mtimespec.tv_nsec)
#define CTIME_NS(s) ((int64_t)(s).st_ctimespec.tv_sec * 1000000000LL + (s).st_ctimespec.tv_nsec)
#else
#define MTIME_NS(s) ((int64_t)(s).st_mtim.tv_sec * 1000000000LL + (s).st_mtim.tv_nsec)
#define CTIME_NS(s) ((int64_t)(s).st_ctim.tv_sec * 1000000000LL + (s).st_ctim.tv_nsec)
#endif

#define MAX_THREADS 8

typedef struct {
  char *name;
  char *target; /* a symlink's target, else NULL */
  double kind, size, mode;
  int64_t mtime_ns, ctime_ns;
  uint64_t inode;
} entry_t;

typedef struct {
  char *path;
  entry_t *entries;
  size_t count, capacity;
  int err;              /* 0, or the errno of the failure */
  const char *syscall;  /* the call that failed */
  char *err_path;       /* the path it failed on (malloc'd) */
} listing_t;

typedef struct {
  listing_t *listings;
  size_t count;
  size_t next; /* the next listing to take, shared by the threads */
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

/* The target of the link `name` in `dir_fd`; NULL with errno set when it cannot be read. */
static char *read_target(int dir_fd, const char *name, size_t hint) {
  size_t size = hint > 0 ? hint + 1 : 256;
  for (;;) {
    char *buffer = malloc(size);
    if (buffer == NULL) {
      errno = ENOMEM;
      return NULL;
    }
    ssize_t n = readlinkat(dir_fd, name, buffer, size);
    if (n < 0) {
      int e = errno;
      free(buffer);
      errno = e;
      return NULL;
    }
    if ((size_t)n < size) {
      buffer[n] = '\0';
      return buffer;
    }
    /* Truncated: the link changed since its stat; try again with room to spare. */
    free(buffer);
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

static void list_directory(listing_t *l) {
  /* O_NOFOLLOW: the path was checked free of symlinks; one swapped in since is refused. */
  int fd = open(l->path, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) return fail(l, errno, "scandir", NULL);
  DIR *dir = fdopendir(fd);
  if (dir == NULL) {
    int e = errno;
    close(fd);
    return fail(l, e, "scandir", NULL);
  }
  for (;;) {
    errno = 0;
    struct dirent *d = readdir(dir);
    if (d == NULL) {
      if (errno != 0) fail(l, errno, "scandir", NULL);
      break;
    }
    const char *name = d->d_name;
    if (name[0] == '.' && (name[1] == '\0' || (name[1] == '.' && name[2] == '\0'))) continue;
    struct stat s;
    if (fstatat(fd, name, &s, AT_SYMLINK_NOFOLLOW) != 0) {
      if (errno == ENOENT) continue; /* gone since the listing */
      fail(l, errno, "lstat", name);
      break;
    }
    entry_t e = {
        .name = NULL,
        .target = NULL,
        .kind = kind_of(s.st_mode),
        .size = (double)s.st_size,
        .mode = (double)(s.st_mode & 07777),
        .mtime_ns = MTIME_NS(s),
        .ctime_ns = CTIME_NS(s),
        .inode = (uint64_t)s.st_ino,
    };
    if (S_ISLNK(s.st_mode)) {
      e.target = read_target(fd, name, (size_t)s.st_size);
      if (e.target == NULL) {
        if (errno == ENOENT) continue;
        fail(l, errno, "readlink", name);
        break;
      }
    }
    e.name = strdup(name);
    if (e.name == NULL || push(l, e) != 0) {
      free(e.name);
      free(e.target);
      fail(l, ENOMEM, "scandir", NULL);
      break;
    }
  }
  closedir(dir);
}

static void *work(void *arg) {
  job_t *job = arg;
  for (;;) {
    size_t i = __atomic_fetch_add(&job->next, 1, __ATOMIC_RELAXED);
    if (i >= job->count) return NULL;
    list_directory(&job->listings[i]);
  }
}

static void free_listing(listing_t *l) {
  for (size_t i = 0; i < l->count; i++) {
    free(l->entries[i].name);
    free(l->entries[i].target);
  }
  free(l->entries);
  free(l->path);
  free(l->err_path);
}

#define CHECK(call)                                   \
  do {                                                \
    if ((call) != napi_ok) goto failed;               \
  } while (0)

static napi_status set(napi_env env, napi_value object, const char *key, napi_value value) {
  return napi_set_named_property(env, object, key, value);
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
  size_t n = l->count;
  napi_value names, targets, buffer;
  void *data;
  CHECK(napi_create_array_with_length(env, n, &names));
  CHECK(napi_create_array_with_length(env, n, &targets));
  for (size_t i = 0; i < n; i++) {
    CHECK(napi_create_string_utf8(env, l->entries[i].name, NAPI_AUTO_LENGTH, &value));
    CHECK(napi_set_element(env, names, (uint32_t)i, value));
    if (l->entries[i].target != NULL) {
      CHECK(napi_create_string_utf8(env, l->entries[i].target, NAPI_AUTO_LENGTH, &value));
      CHECK(napi_set_element(env, targets, (uint32_t)i, value));
    }
  }
  CHECK(set(env, out, "names", names));
  CHECK(set(env, out, "targets", targets));

  CHECK(napi_create_arraybuffer(env, n * 3 * sizeof(double), &data, &buffer));
  double *numbers = data;
  for (size_t i = 0; i < n; i++) {
    numbers[3 * i] = l->entries[i].kind;
    numbers[3 * i + 1] = l->entries[i].size;
    numbers[3 * i + 2] = l->entries[i].mode;
  }
  CHECK(napi_create_typedarray(env, napi_float64_array, n * 3, buffer, 0, &value));
  CHECK(set(env, out, "numbers", value));

  CHECK(napi_create_arraybuffer(env, n * 2 * sizeof(int64_t), &data, &buffer));
  int64_t *times = data;
  for (size_t i = 0; i < n; i++) {
    times[2 * i] = l->entries[i].mtime_ns;
    times[2 * i + 1] = l->entries[i].ctime_ns;
  }
  CHECK(napi_create_typedarray(env, napi_bigint64_array, n * 2, buffer, 0, &value));
  CHECK(set(env, out, "times", value));

  CHECK(napi_create_arraybuffer(env, n * sizeof(uint64_t), &data, &buffer));
  uint64_t *inodes = data;
  for (size_t i = 0; i < n; i++) inodes[i] = l->entries[i].inode;
  CHECK(napi_create_typedarray(env, napi_biguint64_array, n, buffer, 0, &value));
  CHECK(set(env, out, "inodes", value));
  return out;
failed:
  return NULL;
}

static napi_value throw_error(napi_env env, const char *message) {
  napi_throw_error(env, NULL, message);
  return NULL;
}

static napi_value scan(napi_env env, napi_callback_info info) {
  size_t argc = 2;
  napi_value argv[2];
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc < 1)
    return throw_error(env, "scan(paths, threads): paths expected");
  bool is_array = false;
  if (napi_is_array(env, argv[0], &is_array) != napi_ok || !is_array)
    return throw_error(env, "scan(paths, threads): paths must be an array of strings");
  uint32_t count = 0;
  napi_get_array_length(env, argv[0], &count);
  int32_t threads = 1;
  if (argc >= 2) napi_get_value_int32(env, argv[1], &threads);
  if (threads < 1) threads = 1;
  if (threads > MAX_THREADS) threads = MAX_THREADS;
  if ((uint32_t)threads > count) threads = count > 0 ? (int32_t)count : 1;

  listing_t *listings = calloc(count > 0 ? count : 1, sizeof(listing_t));
  if (listings == NULL) return throw_error(env, "scan: out of memory");
  napi_value result = NULL;
  for (uint32_t i = 0; i < count; i++) {
    napi_value element;
    size_t length = 0;
    if (napi_get_element(env, argv[0], i, &element) != napi_ok ||
        napi_get_value_string_utf8(env, element, NULL, 0, &length) != napi_ok) {
      throw_error(env, "scan(paths, threads): paths must be an array of strings");
      goto done;
    }
    listings[i].path = malloc(length + 1);
    if (listings[i].path == NULL) {
      throw_error(env, "scan: out of memory");
      goto done;
    }
    napi_get_value_string_utf8(env, element, listings[i].path, length + 1, &length);
    if (strlen(listings[i].path) != length) {
      throw_error(env, "scan: a path holds a NUL character");
      goto done;
    }
  }

  job_t job = {.listings = listings, .count = count, .next = 0};
  pthread_t helpers[MAX_THREADS];
  int started = 0;
  for (int t = 1; t < threads; t++) {
    if (pthread_create(&helpers[started], NULL, work, &job) == 0) started++;
  }
  work(&job); /* the calling thread takes its share; the call returns when all are listed */
  for (int t = 0; t < started; t++) pthread_join(helpers[t], NULL);

  if (napi_create_array_with_length(env, count, &result) != napi_ok) goto done;
  for (uint32_t i = 0; i < count; i++) {
    napi_value listing = to_js(env, &listings[i]);
    if (listing == NULL || napi_set_element(env, result, i, listing) != napi_ok) {
      result = NULL;
      bool pending = false;
      napi_is_exception_pending(env, &pending);
      if (!pending) throw_error(env, "scan: could not build the result");
      goto done;
    }
  }
done:
  for (uint32_t i = 0; i < count; i++) free_listing(&listings[i]);
  free(listings);
  return result;
}

NAPI_MODULE_INIT() {
  napi_value fn;
  if (napi_create_function(env, "scan", NAPI_AUTO_LENGTH, scan, NULL, &fn) != napi_ok) return NULL;
  if (napi_set_named_property(env, exports, "scan", fn) != napi_ok) return NULL;
  return exports;
}
