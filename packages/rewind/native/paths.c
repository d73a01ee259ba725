/* See paths.h. Node's rules restated for POSIX paths; any difference would only send a hook to
 * the Node client (no server found), never to another workspace's server, since the server
 * checks the workspace and store of every call (hookMethod.ts). */
#include "paths.h"
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

char *path_normalize(const char *path) {
  size_t n = strlen(path);
  int absolute = path[0] == '/';
  /* The kept segments, as (start, length) in `path`; ".." pops one, or stays in a relative path. */
  size_t *starts = malloc((n + 1) * sizeof *starts), *lengths = malloc((n + 1) * sizeof *lengths);
  if (starts == NULL || lengths == NULL) abort();
  size_t count = 0;
  for (size_t i = 0; i < n;) {
    while (i < n && path[i] == '/') i++;
    size_t start = i;
    while (i < n && path[i] != '/') i++;
    size_t len = i - start;
    if (len == 0 || (len == 1 && path[start] == '.')) continue;
    if (len == 2 && path[start] == '.' && path[start + 1] == '.') {
      int top_is_up = count > 0 && lengths[count - 1] == 2 && path[starts[count - 1]] == '.' &&
                      path[starts[count - 1] + 1] == '.';
      if (count > 0 && !top_is_up) { count--; continue; }
      if (absolute) continue;
    }
    starts[count] = start;
    lengths[count++] = len;
  }
  char *out = malloc(n + 2);
  if (out == NULL) abort();
  size_t len = 0;
  if (absolute) out[len++] = '/';
  for (size_t k = 0; k < count; k++) {
    if (k > 0) out[len++] = '/';
    memcpy(out + len, path + starts[k], lengths[k]);
    len += lengths[k];
  }
  if (len == 0) out[len++] = '.';
  out[len] = 0;
  free(starts);
  free(lengths);
  return out;
}

char *path_join(const char *a, const char *b) {
  size_t la = strlen(a), lb = strlen(b);
  char *joined = malloc(la + lb + 2);
  if (joined == NULL) abort();
  memcpy(joined, a, la);
  joined[la] = '/';
  memcpy(joined + la + 1, b, lb + 1);
  if (la == 0) memmove(joined, joined + 1, lb + 1);
  char *out = path_normalize(joined);
  free(joined);
  return out;
}

char *path_resolve(const char *path) {
  if (path[0] == '/') return path_normalize(path);
  char cwd[PATH_MAX];
  if (getcwd(cwd, sizeof cwd) == NULL) return NULL;
  return path_join(cwd, path);
}

char *path_real(const char *path) {
  char *real = realpath(path, NULL);
  return real != NULL ? real : path_resolve(path);
}

char *temp_dir(void) {
  const char *names[] = {"TMPDIR", "TMP", "TEMP"};
  const char *dir = "/tmp";
  for (int i = 0; i < 3; i++) {
    const char *value = getenv(names[i]);
    if (value != NULL && value[0] != 0) { dir = value; break; }
  }
  char *out = strdup(dir);
  size_t n = strlen(out);
  if (n > 1 && out[n - 1] == '/') out[n - 1] = 0;
  return out;
}

int path_exists(const char *path) {
  struct stat st;
  return stat(path, &st) == 0;
}

int make_dirs(const char *path, int mode) {
  struct stat st;
  if (stat(path, &st) == 0) {
    if (S_ISDIR(st.st_mode)) return 0;
    errno = EEXIST;
    return -1;
  }
  char *copy = strdup(path);
  char *slash = strrchr(copy, '/');
  if (slash != NULL && slash != copy) {
    *slash = 0;
    if (make_dirs(copy, mode) != 0) { free(copy); return -1; }
  }
  free(copy);
  if (mkdir(path, (mode_t)mode) != 0 && errno != EEXIST) return -1;
  return 0;
}
