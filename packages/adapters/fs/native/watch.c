/*
 * watch: the workspace watcher of a live engine, on Linux inotify (built into dirscan.node).
 *
 * A repeat capture in a long-running process should cost what changed since the last one, not a
 * walk of the whole tree. This module keeps one inotify instance per watched workspace, with a
 * watch on every directory below the root (watch first, then list, so nothing created in a new
 * directory can slip between the two), and answers, when asked, the paths that changed.
 *
 * Why inotify here rather than a library: the kernel queues an inotify event during the system
 * call that made the change, so once a writer's call has returned, its event is in the queue.
 * Draining the (non-blocking) descriptor until it is empty is then a complete barrier for every
 * change made before the drain began, with no debounce delay; and IN_Q_OVERFLOW, a watch that
 * cannot be added (the watch limit), a root that moved, or a filesystem whose changes a local
 * watch cannot see (network and FUSE filesystems) are all reported, for the caller to fall back to
 * a full scan. Nothing is written: the module only reads directories and the inotify descriptor.
 *
 * watchOpen(root: string, skipNames: string[], skipRelatives: string[], cookieDirectory?: string)
 *   -> { handle, watched: number } | { reason: string }
 *   Watches `root` and every directory below it except those named in `skipNames` (at any depth)
 *   and the relative paths in `skipRelatives`; never descends a symlink. `cookieDirectory`, when
 *   given, is watched too, by itself: names created in it come back as `cookies` (the caller's
 *   liveness check).
 * watchDrain(handle) -> { paths: string[], overflow: boolean, lost?: string, cookies: string[],
 *   watched: number }
 *   Everything queued since the last drain. `paths` are relative to the root ("" never appears):
 *   the entry an event named (a file, link or directory; a rename gives both names). A directory
 *   that appears is watched, with everything below it, before the drain returns. A name that is
 *   not UTF-8 is reported as its directory. `lost` says why the change set can no longer be
 *   trusted (the caller re-opens the watcher).
 * watchClose(handle): closes the descriptor (also done when the handle is collected).
 */
#define _GNU_SOURCE
#define NAPI_VERSION 8
#include <node_api.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "shared.h"

#ifdef __linux__
#include <sys/inotify.h>
#include <sys/vfs.h>

#define MASK                                                                                            \
  (IN_CREATE | IN_DELETE | IN_MODIFY | IN_ATTRIB | IN_MOVED_FROM | IN_MOVED_TO | IN_DELETE_SELF |    \
   IN_MOVE_SELF | IN_DONT_FOLLOW | IN_ONLYDIR | IN_EXCL_UNLINK)
#define COOKIE_MASK (IN_CREATE | IN_MOVED_TO | IN_DONT_FOLLOW | IN_ONLYDIR)

typedef struct {
  int fd;
  char *root;
  /* Relative path of each watch descriptor ("" the root), NULL for a free slot. */
  char **paths;
  int capacity;
  int watched;
  int cookie_wd;
  char **skip_names;
  int skip_names_count;
  char **skip_relatives;
  int skip_relatives_count;
  /* Why the watches no longer cover the tree (a static message or a malloc'd one), or NULL. */
  char *lost;
} watcher_t;

typedef struct {
  char **items;
  int count;
  int capacity;
} strings_t;

static int strings_push(strings_t *s, const char *value) {
  if (s->count == s->capacity) {
    int next = s->capacity == 0 ? 64 : s->capacity * 2;
    char **grown = realloc(s->items, sizeof(char *) * next);
    if (grown == NULL) return -1;
    s->items = grown;
    s->capacity = next;
  }
  char *copy = strdup(value);
  if (copy == NULL) return -1;
  s->items[s->count++] = copy;
  return 0;
}

static void strings_free(strings_t *s) {
  for (int i = 0; i < s->count; i++) free(s->items[i]);
  free(s->items);
  s->items = NULL;
  s->count = s->capacity = 0;
}

static void set_lost(watcher_t *w, const char *why, const char *path) {
  if (w->lost != NULL) return;
  size_t n = strlen(why) + strlen(path) + 4;
  w->lost = malloc(n);
  if (w->lost != NULL) snprintf(w->lost, n, "%s%s", why, path);
}

/* Magic numbers (statfs f_type) of filesystems whose changes a local inotify watch does not see. */
static const long REMOTE[] = {
    0x6969L,     /* nfs */
    0x517BL,     /* smb */
    0xFF534D42L, /* cifs */
    0xFE534D42L, /* smb2 */
    0x65735546L, /* fuse (sshfs, ...) */
    0x01021997L, /* 9p (WSL, VMs) */
    0x5346414FL, /* afs */
    0x00C36400L, /* ceph */
    0x73757245L, /* coda */
    0x0BD00BD0L, /* lustre */
    0x564cL,     /* ncp */
};

/* NULL when changes under `absolute` are visible to a local watch, else why not. */
static const char *unwatchable(const char *absolute) {
  struct statfs s;
  if (statfs(absolute, &s) != 0) return NULL;
  for (size_t i = 0; i < sizeof(REMOTE) / sizeof(REMOTE[0]); i++)
    if ((long)s.f_type == REMOTE[i])
      return "a network or FUSE filesystem, whose changes by other machines or processes a local watch cannot see: ";
  return NULL;
}

static int valid_utf8(const unsigned char *s) {
  while (*s) {
    unsigned char c = *s;
    int n = c < 0x80 ? 0 : (c >> 5) == 0x6 ? 1 : (c >> 4) == 0xE ? 2 : (c >> 3) == 0x1E ? 3 : -1;
    if (n < 0) return 0;
    s++;
    for (int i = 0; i < n; i++, s++)
      if ((*s & 0xC0) != 0x80) return 0;
  }
  return 1;
}

static char *join(const char *dir, const char *name) {
  size_t a = strlen(dir), b = strlen(name);
  char *out = malloc(a + b + 2);
  if (out == NULL) return NULL;
  if (a == 0) {
    memcpy(out, name, b + 1);
  } else {
    memcpy(out, dir, a);
    out[a] = '/';
    memcpy(out + a + 1, name, b + 1);
  }
  return out;
}

static int skipped(watcher_t *w, const char *relative, const char *name) {
  for (int i = 0; i < w->skip_names_count; i++)
    if (strcmp(name, w->skip_names[i]) == 0) return 1;
  for (int i = 0; i < w->skip_relatives_count; i++)
    if (strcmp(relative, w->skip_relatives[i]) == 0) return 1;
  return 0;
}

static int remember(watcher_t *w, int wd, const char *relative) {
  if (wd >= w->capacity) {
    int next = w->capacity == 0 ? 1024 : w->capacity;
    while (next <= wd) next *= 2;
    char **grown = realloc(w->paths, sizeof(char *) * next);
    if (grown == NULL) return -1;
    memset(grown + w->capacity, 0, sizeof(char *) * (next - w->capacity));
    w->paths = grown;
    w->capacity = next;
  }
  if (w->paths[wd] != NULL) {
    /* Watched already (a directory seen twice): its path is the newer name. */
    free(w->paths[wd]);
    w->watched--;
  }
  w->paths[wd] = strdup(relative);
  if (w->paths[wd] == NULL) return -1;
  w->watched++;
  return 0;
}

/* Watches `relative` and every directory below it (iteratively, depth first). */
static void watch_tree(watcher_t *w, const char *start) {
  strings_t stack = {0};
  if (strings_push(&stack, start) != 0) {
    set_lost(w, "out of memory while watching ", start);
    return;
  }
  while (stack.count > 0 && w->lost == NULL) {
    char *relative = stack.items[--stack.count];
    char *absolute = join(w->root, relative);
    if (relative[0] == '\0') {
      free(absolute);
      absolute = strdup(w->root);
    }
    if (absolute == NULL) {
      set_lost(w, "out of memory while watching ", relative);
      free(relative);
      break;
    }
    int wd = inotify_add_watch(w->fd, absolute, MASK);
    if (wd < 0) {
      int e = errno;
      /* Gone, or not a directory (any more): nothing to watch, and its parent's event says so. */
      if (e != ENOENT && e != ENOTDIR && e != ELOOP) {
        set_lost(w,
                 e == ENOSPC ? "the inotify watch limit (fs.inotify.max_user_watches) is reached at "
                 : e == EACCES ? "a directory that cannot be read cannot be watched: "
                               : "a directory could not be watched: ",
                 relative[0] == '\0' ? "." : relative);
      }
      free(absolute);
      free(relative);
      continue;
    }
    const char *why = unwatchable(absolute);
    if (why != NULL) set_lost(w, why, relative[0] == '\0' ? "." : relative);
    if (remember(w, wd, relative) != 0) set_lost(w, "out of memory while watching ", relative);
    int dfd = open(absolute, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    free(absolute);
    DIR *dir = dfd < 0 ? NULL : fdopendir(dfd);
    if (dir == NULL) {
      if (dfd >= 0) close(dfd);
      /* Removed meanwhile: the parent's event reports it. */
      if (errno != ENOENT && errno != ENOTDIR && errno != ELOOP)
        set_lost(w, "a directory could not be listed: ", relative[0] == '\0' ? "." : relative);
      free(relative);
      continue;
    }
    struct dirent *d;
    while ((d = readdir(dir)) != NULL) {
      const char *name = d->d_name;
      if (strcmp(name, ".") == 0 || strcmp(name, "..") == 0) continue;
      int is_dir = d->d_type == DT_DIR;
      if (d->d_type == DT_UNKNOWN) {
        struct stat st;
        is_dir = fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode);
      }
      if (!is_dir || !valid_utf8((const unsigned char *)name)) continue;
      char *child = join(relative, name);
      if (child == NULL || (!skipped(w, child, name) && strings_push(&stack, child) != 0))
        set_lost(w, "out of memory while watching ", relative);
      free(child);
    }
    closedir(dir);
    free(relative);
  }
  strings_free(&stack);
}

/* Forgets the watches of `relative` and everything below it (a directory moved away). */
static void forget_tree(watcher_t *w, const char *relative) {
  size_t n = strlen(relative);
  for (int wd = 0; wd < w->capacity; wd++) {
    const char *p = w->paths[wd];
    if (p == NULL || wd == w->cookie_wd) continue;
    if (strncmp(p, relative, n) == 0 && (p[n] == '\0' || p[n] == '/')) {
      inotify_rm_watch(w->fd, wd);
      free(w->paths[wd]);
      w->paths[wd] = NULL;
      w->watched--;
    }
  }
}

static void free_watcher(watcher_t *w) {
  if (w->fd >= 0) close(w->fd);
  w->fd = -1;
  for (int i = 0; i < w->capacity; i++) free(w->paths[i]);
  free(w->paths);
  w->paths = NULL;
  w->capacity = 0;
  for (int i = 0; i < w->skip_names_count; i++) free(w->skip_names[i]);
  free(w->skip_names);
  w->skip_names = NULL;
  for (int i = 0; i < w->skip_relatives_count; i++) free(w->skip_relatives[i]);
  free(w->skip_relatives);
  w->skip_relatives = NULL;
  free(w->root);
  w->root = NULL;
  free(w->lost);
  w->lost = NULL;
}

static void finalize(napi_env env, void *data, void *hint) {
  watcher_t *w = data;
  free_watcher(w);
  free(w);
}

static napi_value throw_message(napi_env env, const char *message) {
  napi_throw_error(env, NULL, message);
  return NULL;
}

static char *js_string(napi_env env, napi_value value) { return dirscan_js_string(env, value, NULL); }

/* A JS array of strings as a C array (count in *count); NULL with *count -1 on a bad value. */
static char **js_strings(napi_env env, napi_value array, int *count) {
  uint32_t n;
  *count = -1;
  if (napi_get_array_length(env, array, &n) != napi_ok) return NULL;
  char **out = calloc(n == 0 ? 1 : n, sizeof(char *));
  if (out == NULL) return NULL;
  for (uint32_t i = 0; i < n; i++) {
    napi_value item;
    if (napi_get_element(env, array, i, &item) != napi_ok || (out[i] = js_string(env, item)) == NULL) {
      for (uint32_t j = 0; j < i; j++) free(out[j]);
      free(out);
      return NULL;
    }
  }
  *count = (int)n;
  return out;
}

static napi_value string_value(napi_env env, const char *s) {
  napi_value out;
  return napi_create_string_utf8(env, s, NAPI_AUTO_LENGTH, &out) == napi_ok ? out : NULL;
}

static napi_value reason_object(napi_env env, const char *reason) {
  napi_value out;
  napi_create_object(env, &out);
  napi_set_named_property(env, out, "reason", string_value(env, reason));
  return out;
}

static napi_value watch_open(napi_env env, napi_callback_info info) {
  size_t argc = 4;
  napi_value argv[4];
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc < 3)
    return throw_message(env, "watch: watchOpen(root, skipNames, skipRelatives, cookieDirectory?)");
  watcher_t *w = calloc(1, sizeof(watcher_t));
  if (w == NULL) return throw_message(env, "watch: out of memory");
  w->fd = -1;
  w->cookie_wd = -1;
  w->root = js_string(env, argv[0]);
  w->skip_names = js_strings(env, argv[1], &w->skip_names_count);
  w->skip_relatives = js_strings(env, argv[2], &w->skip_relatives_count);
  char *cookies = NULL;
  napi_valuetype type = napi_undefined;
  if (argc > 3) napi_typeof(env, argv[3], &type);
  if (type == napi_string) cookies = js_string(env, argv[3]);
  if (w->root == NULL || w->skip_names_count < 0 || w->skip_relatives_count < 0 ||
      (type == napi_string && cookies == NULL)) {
    free_watcher(w);
    free(w);
    free(cookies);
    return throw_message(env, "watch: bad arguments");
  }
  w->fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
  if (w->fd < 0) {
    int e = errno;
    free_watcher(w);
    free(w);
    free(cookies);
    return reason_object(env, e == EMFILE ? "the inotify instance limit (fs.inotify.max_user_instances) is reached"
                                          : "inotify could not be initialised");
  }
  if (cookies != NULL) {
    w->cookie_wd = inotify_add_watch(w->fd, cookies, COOKIE_MASK);
    free(cookies);
    if (w->cookie_wd < 0 || remember(w, w->cookie_wd, "") != 0) {
      free_watcher(w);
      free(w);
      return reason_object(env, "the flush cookie directory could not be watched");
    }
    w->watched--; /* not a directory of the tree */
  }
  watch_tree(w, "");
  if (w->lost != NULL) {
    napi_value out = reason_object(env, w->lost);
    free_watcher(w);
    free(w);
    return out;
  }
  napi_value out, handle, watched;
  napi_create_object(env, &out);
  if (napi_create_external(env, w, finalize, NULL, &handle) != napi_ok) {
    free_watcher(w);
    free(w);
    return throw_message(env, "watch: out of memory");
  }
  napi_create_int32(env, w->watched, &watched);
  napi_set_named_property(env, out, "handle", handle);
  napi_set_named_property(env, out, "watched", watched);
  return out;
}

static watcher_t *handle_of(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1];
  void *data = NULL;
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc < 1 ||
      napi_get_value_external(env, argv[0], &data) != napi_ok)
    return NULL;
  return data;
}

/* Handles one event; returns -1 when out of memory. */
static int handle_event(watcher_t *w, const struct inotify_event *e, strings_t *paths, strings_t *cookies) {
  if (e->mask & IN_Q_OVERFLOW) return 1;
  if (e->wd < 0 || e->wd >= w->capacity || w->paths[e->wd] == NULL) return 0; /* a forgotten watch */
  if (e->wd == w->cookie_wd) {
    if (e->len > 0 && (e->mask & (IN_CREATE | IN_MOVED_TO))) return strings_push(cookies, e->name);
    if (e->mask & (IN_IGNORED | IN_DELETE_SELF | IN_MOVE_SELF)) set_lost(w, "the flush cookie directory went away", "");
    return 0;
  }
  const char *dir = w->paths[e->wd];
  if (e->mask & IN_IGNORED) {
    /* The directory is gone (its parent's event reported it), or the root was. */
    if (dir[0] == '\0') set_lost(w, "the workspace root was removed or unmounted", "");
    free(w->paths[e->wd]);
    w->paths[e->wd] = NULL;
    w->watched--;
    return 0;
  }
  if (e->mask & IN_UNMOUNT) {
    set_lost(w, "a filesystem was unmounted under ", dir[0] == '\0' ? "." : dir);
    return 0;
  }
  if (e->mask & (IN_DELETE_SELF | IN_MOVE_SELF)) {
    if (dir[0] == '\0') set_lost(w, "the workspace root was moved or removed", "");
    return 0; /* the parent's IN_DELETE / IN_MOVED_FROM names it */
  }
  if (e->len == 0) return 0;
  if (!valid_utf8((const unsigned char *)e->name)) {
    /* Not nameable by a workspace path: the directory is reported, to be listed again. */
    return dir[0] == '\0' ? (set_lost(w, "a name that is not UTF-8 changed at the root", ""), 0)
                          : strings_push(paths, dir);
  }
  char *path = join(dir, e->name);
  if (path == NULL) return -1;
  int r = strings_push(paths, path);
  if (e->mask & IN_ISDIR) {
    if (e->mask & IN_MOVED_FROM) forget_tree(w, path);
    if ((e->mask & (IN_CREATE | IN_MOVED_TO)) && !skipped(w, path, e->name)) watch_tree(w, path);
  }
  free(path);
  return r;
}

static napi_value strings_value(napi_env env, strings_t *s) {
  napi_value array;
  napi_create_array_with_length(env, s->count, &array);
  for (int i = 0; i < s->count; i++) napi_set_element(env, array, i, string_value(env, s->items[i]));
  return array;
}

static napi_value watch_drain(napi_env env, napi_callback_info info) {
  watcher_t *w = handle_of(env, info);
  if (w == NULL) return throw_message(env, "watch: watchDrain(handle)");
  strings_t paths = {0}, cookies = {0};
  int overflow = 0, failed = 0;
  char buffer[64 * 1024] __attribute__((aligned(__alignof__(struct inotify_event))));
  while (w->fd >= 0) {
    ssize_t n = read(w->fd, buffer, sizeof(buffer));
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno != EAGAIN) set_lost(w, "reading the inotify queue failed", "");
      break;
    }
    if (n == 0) break;
    for (char *p = buffer; p < buffer + n;) {
      const struct inotify_event *e = (const struct inotify_event *)p;
      int r = handle_event(w, e, &paths, &cookies);
      if (r > 0) overflow = 1;
      if (r < 0) failed = 1;
      p += sizeof(struct inotify_event) + e->len;
    }
  }
  if (failed) set_lost(w, "out of memory while draining the inotify queue", "");
  napi_value out, flag, watched;
  napi_create_object(env, &out);
  napi_set_named_property(env, out, "paths", strings_value(env, &paths));
  napi_set_named_property(env, out, "cookies", strings_value(env, &cookies));
  napi_get_boolean(env, overflow, &flag);
  napi_set_named_property(env, out, "overflow", flag);
  napi_create_int32(env, w->watched, &watched);
  napi_set_named_property(env, out, "watched", watched);
  if (w->lost != NULL) napi_set_named_property(env, out, "lost", string_value(env, w->lost));
  strings_free(&paths);
  strings_free(&cookies);
  return out;
}

static napi_value watch_close(napi_env env, napi_callback_info info) {
  watcher_t *w = handle_of(env, info);
  if (w == NULL) return throw_message(env, "watch: watchClose(handle)");
  if (w->fd >= 0) close(w->fd);
  w->fd = -1;
  return NULL;
}

int export_watch(napi_env env, napi_value exports) {
  const char *names[] = {"watchOpen", "watchDrain", "watchClose"};
  napi_callback fns[] = {watch_open, watch_drain, watch_close};
  for (int i = 0; i < 3; i++) {
    napi_value value;
    if (napi_create_function(env, names[i], NAPI_AUTO_LENGTH, fns[i], NULL, &value) != napi_ok ||
        napi_set_named_property(env, exports, names[i], value) != napi_ok)
      return -1;
  }
  return 0;
}

#else

/* Not Linux: no watcher is exported, and a live engine says so (it scans in full). */
int export_watch(napi_env env, napi_value exports) { return 0; }

#endif
