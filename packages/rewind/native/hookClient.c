/* rewind-hook: the native hook client, what the hook entries `rewind install` writes run when it
 * was built (see docs/hooks.md "The native hook client"). It does what the Node hook client
 * (src/hooks/hookClient.ts) does on its fast path, without a Node start: read the event on stdin,
 * find the workspace, its store and its server's socket by the same rules (hookInput.ts,
 * server/workspaceSocket.ts), send the event as one `hook` request and print the server's answer.
 *
 * Invariants:
 * - anything off the fast path BEFORE the request was sent (no server on the socket, a payload it
 *   does not read exactly as JSON.parse would, a path it cannot name, REWIND_HOOK_SERVER=off) is
 *   handed to the Node hook client with the same stdin bytes (`--fallback`, the Node command), so
 *   the slow path still explains, starts the server or runs in process, as the Node client does;
 * - at most once: once the request was sent, a missing or garbled answer is reported (stderr and
 *   the store's problem log, worded as the Node client words it) and never re-run; only an answer
 *   saying the server did NOT apply the event (a refusal or an error) lets the Node client run
 *   it in its own process (REWIND_HOOK_SERVER_REFUSED carries the reason), as the Node client
 *   itself does after such an answer;
 * - it never fails the agent: exit 0 always, the agent's protocol output on stdout;
 * - on the Node path it does what the installed Node command's prefix does (hookInstall.ts): the
 *   CA bundle is kept out of the Node start and handed on as REWIND_HOOK_CA_CERTS.
 *
 * Usage: rewind-hook hook <claude-code|gemini-cli> [--workspace W] [--dir D] [--fallback CMD]
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "json.h"
#include "paths.h"
#include "sha256.h"

#define MAX_SOCKET_PATH_BYTES 103
#ifndef MSG_NOSIGNAL
#define MSG_NOSIGNAL 0
#endif

static const char *agent = "claude-code";
static const char *fallback_command = NULL;
/* The arguments after `hook`, as the Node client gets them (without --fallback). */
static char **node_args;
static int node_arg_count;
static buffer payload;

static const char *protocol_output(void) { return strcmp(agent, "gemini-cli") == 0 ? "{}\n" : ""; }

/* Hands the event to the Node hook client (never returns). `refused`: the server's answer that it
 * did not apply the event, for the Node client to run it in its own process and say why. */
static void run_node(const char *refused) {
  int fds[2];
  if (pipe(fds) == 0) {
    pid_t child = fork();
    if (child == 0) {
      /* A grandchild feeds the bytes (a payload can exceed a pipe's buffer), reparented to init
       * so nobody needs to reap it. */
      if (fork() == 0) {
        close(fds[0]);
        signal(SIGPIPE, SIG_DFL);
        for (size_t done = 0; done < payload.length;) {
          ssize_t n = write(fds[1], payload.data + done, payload.length - done);
          if (n < 0 && errno == EINTR) continue;
          if (n <= 0) break;
          done += (size_t)n;
        }
        _exit(0);
      }
      _exit(0);
    }
    if (child > 0) waitpid(child, NULL, 0);
    close(fds[1]);
    dup2(fds[0], 0);
    close(fds[0]);
  }
  const char *ca = getenv("NODE_EXTRA_CA_CERTS");
  setenv("REWIND_HOOK_CA_CERTS", ca == NULL ? "" : ca, 1);
  unsetenv("NODE_EXTRA_CA_CERTS");
  if (refused != NULL) setenv("REWIND_HOOK_SERVER_REFUSED", refused, 1);
  /* An ignored signal stays ignored across exec: the Node command gets the default back. */
  signal(SIGPIPE, SIG_DFL);
  char **argv = calloc((size_t)node_arg_count + 6, sizeof *argv);
  int n = 0;
  if (fallback_command != NULL) {
    /* The Node command as `rewind install` wrote it (a shell word list), the arguments after it. */
    buffer script = {0};
    buffer_str(&script, fallback_command);
    buffer_str(&script, " \"$@\"");
    argv[n++] = "sh";
    argv[n++] = "-c";
    argv[n++] = script.data;
    argv[n++] = "rewind";
  } else argv[n++] = "rewind";
  for (int i = 0; i < node_arg_count; i++) argv[n++] = node_args[i];
  argv[n] = NULL;
  if (fallback_command != NULL) execv("/bin/sh", argv);
  else execvp("rewind", argv);
  fprintf(stdout, "%s", protocol_output());
  fprintf(stderr, "rewind hook %s: the Node hook client could not be started (%s); nothing recorded\n", agent,
          strerror(errno));
  exit(0);
}

static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

/* numberSetting (hookClient.ts): a positive finite number, else the default. */
static double number_setting(const char *name, double fallback) {
  const char *value = getenv(name);
  if (value == NULL) return fallback;
  char *end;
  double v = strtod(value, &end);
  while (*end == ' ' || *end == '\t' || *end == '\n') end++;
  return end != value && *end == 0 && v > 0 && v < 1e300 ? v : fallback;
}

/* hookInput.ts' resolveHookWorkspace. */
static char *workspace_for(const char *workspace, const char *cwd) {
  if (workspace != NULL) return path_resolve(workspace);
  const char *project = getenv("CLAUDE_PROJECT_DIR");
  if (strcmp(agent, "gemini-cli") == 0 && getenv("GEMINI_PROJECT_DIR") != NULL) project = getenv("GEMINI_PROJECT_DIR");
  if (project != NULL && project[0] != 0) return path_resolve(project);
  char *start = path_resolve(cwd);
  if (start == NULL) return NULL;
  for (char *dir = strdup(start);;) {
    char *store = path_join(dir, ".rewind");
    int found = path_exists(store);
    free(store);
    if (found) return dir;
    if (strcmp(dir, "/") == 0) break;
    char *slash = strrchr(dir, '/');
    if (slash == dir) dir[1] = 0;
    else *slash = 0;
  }
  return start;
}

/* workspaceSocket.ts' workspaceSocketPath (creating its directory), or NULL. */
static char *socket_path(const char *root, const char *store) {
  char *real_root = path_real(root), *real_store = path_real(store);
  if (real_root == NULL || real_store == NULL) return NULL;
  buffer key = {0};
  buffer_add(&key, real_root, strlen(real_root));
  buffer_add(&key, "", 1);
  buffer_add(&key, real_store, strlen(real_store));
  char hex[65], name[32];
  sha256_hex((const unsigned char *)key.data, key.length, hex);
  snprintf(name, sizeof name, "%.24s.sock", hex);
  char fallback[64];
  snprintf(fallback, sizeof fallback, "rewind-%ld", (long)getuid());
  const char *runtime = getenv("XDG_RUNTIME_DIR");
  char *dirs[2];
  int count = 0;
  if (runtime != NULL && runtime[0] != 0) dirs[count++] = path_join(runtime, "rewind");
  dirs[count++] = path_join(temp_dir(), fallback);
  for (int i = 0; i < count; i++) {
    /* A relative directory would name a socket relative to the agent's directory: Node's. */
    if (dirs[i][0] != '/') return NULL;
    char *path = path_join(dirs[i], name);
    if (strlen(path) > MAX_SOCKET_PATH_BYTES) continue;
    if (make_dirs(dirs[i], 0700) != 0) continue; /* the last failure is the Node client's to say */
    return path;
  }
  return NULL;
}

/* The store's problem log (hookProblems.ts), when the store exists; a diagnostic, never fatal. */
static void log_problem(const char *store, const char *line) {
  if (!path_exists(store)) return;
  char *dir = path_join(store, "hooks");
  if (make_dirs(dir, 0777) != 0) return;
  char *file = path_join(dir, "problems.jsonl");
  int fd = open(file, O_WRONLY | O_APPEND | O_CREAT, 0666);
  if (fd < 0) return;
  struct timespec t;
  clock_gettime(CLOCK_REALTIME, &t);
  char at[32];
  snprintf(at, sizeof at, "%lld", (long long)t.tv_sec * 1000 + t.tv_nsec / 1000000);
  buffer entry = {0};
  buffer_str(&entry, "{\"at\":");
  buffer_str(&entry, at);
  buffer_str(&entry, ",\"agent\":");
  buffer_json_string(&entry, agent);
  buffer_str(&entry, ",\"event\":\"(server)\",\"message\":");
  buffer_json_string(&entry, line);
  buffer_str(&entry, "}\n");
  /* One write of the whole line, as appendFileSync does. */
  ssize_t ignored = write(fd, entry.data, entry.length);
  (void)ignored;
  close(fd);
}

static const char *socket_path_sent;
static const char *store_dir;

/* The event was sent but no usable answer came: reported, never re-run (see the header). */
static void unanswered(const char *why) {
  size_t n = strlen(socket_path_sent);
  buffer log = {0};
  buffer_add(&log, socket_path_sent, n - 5); /* ".sock" -> ".log" */
  buffer_str(&log, ".log");
  buffer line = {0};
  buffer_str(&line, "rewind hook ");
  buffer_str(&line, agent);
  buffer_str(&line, ": the event was sent to the server on ");
  buffer_str(&line, socket_path_sent);
  buffer_str(&line, " but ");
  buffer_str(&line, why);
  buffer_str(&line, "; it was not run again in this process, since the server may still apply it (see ");
  buffer_str(&line, log.data);
  buffer_str(&line, ")");
  log_problem(store_dir, line.data);
  fputs(protocol_output(), stdout);
  fprintf(stderr, "%s\n", line.data);
  exit(0);
}

/* Sends the whole request and returns the first answer line with id 1 (parsed); reports the
 * event unanswered on a timeout, a lost connection or a line that is not JSON. */
static jvalue *exchange(int fd, buffer *request, double timeout_ms) {
  double deadline = now_ms() + timeout_ms;
  char why[160];
  snprintf(why, sizeof why, "the server did not answer within %.15g ms", timeout_ms);
  size_t sent = 0;
  buffer in = {0};
  size_t scanned = 0;
  for (;;) {
    double left = deadline - now_ms();
    if (left <= 0) unanswered(why);
    struct pollfd p = {fd, (short)(POLLIN | (sent < request->length ? POLLOUT : 0)), 0};
    int ready = poll(&p, 1, (int)(left + 1));
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) continue;
    if (sent < request->length && (p.revents & POLLOUT)) {
      ssize_t n = send(fd, request->data + sent, request->length - sent, MSG_NOSIGNAL);
      if (n < 0 && errno != EINTR && errno != EAGAIN) {
        char failed[200];
        snprintf(failed, sizeof failed, "the connection failed: %s", strerror(errno));
        unanswered(failed);
      }
      if (n > 0) sent += (size_t)n;
    }
    if (!(p.revents & (POLLIN | POLLHUP | POLLERR))) continue;
    char chunk[65536];
    ssize_t n = recv(fd, chunk, sizeof chunk, 0);
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (n < 0) {
      char failed[200];
      snprintf(failed, sizeof failed, "the connection failed: %s", strerror(errno));
      unanswered(failed);
    }
    if (n == 0) unanswered("the server closed the connection without answering");
    buffer_add(&in, chunk, (size_t)n);
    for (char *nl; (nl = memchr(in.data + scanned, '\n', in.length - scanned)) != NULL;) {
      size_t start = scanned, length = (size_t)(nl - in.data) - start;
      scanned = start + length + 1;
      jvalue *message = json_parse(in.data + start, length);
      if (message == NULL) {
        buffer garbled = {0};
        buffer_str(&garbled, "the server answered a line that is not JSON: ");
        size_t cut = length < 200 ? length : 200;
        while (cut > 0 && cut < length && ((unsigned char)in.data[start + cut] & 0xc0) == 0x80) cut--;
        buffer_add(&garbled, in.data + start, cut);
        unanswered(garbled.data);
      }
      jvalue *id = json_get(message, "id");
      if (id != NULL && id->type == J_NUMBER && id->number == 1) return message;
    }
  }
}

static void write_all(int fd, const char *data, size_t n) {
  for (size_t done = 0; done < n;) {
    ssize_t w = write(fd, data + done, n - done);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return;
    done += (size_t)w;
  }
}

/* The test probe (test/hooks.nativeClient.test.ts checks these rules against Node's own):
 * `--probe-json` reads stdin and prints whether the reader accepts it and its SHA-256;
 * `--probe-socket ROOT STORE` prints the socket path of (ROOT, STORE). */
static int probe(int argc, char **argv) {
  if (strcmp(argv[1], "--probe-socket") == 0 && argc == 4) {
    char *path = socket_path(argv[2], argv[3]);
    printf("%s\n", path == NULL ? "(none)" : path);
    return 0;
  }
  buffer in = {0};
  buffer_add(&in, "", 0);
  for (char chunk[65536];;) {
    ssize_t n = read(0, chunk, sizeof chunk);
    if (n <= 0) break;
    buffer_add(&in, chunk, (size_t)n);
  }
  char hex[65];
  sha256_hex((const unsigned char *)in.data, in.length, hex);
  int accepted = utf8_valid((const unsigned char *)in.data, in.length) && json_parse(in.data, in.length) != NULL;
  printf("%s %s\n", accepted ? "accepted" : "refused", hex);
  return 0;
}

int main(int argc, char **argv) {
  if (argc >= 2 && strncmp(argv[1], "--probe-", 8) == 0) return probe(argc, argv);
  signal(SIGPIPE, SIG_IGN);
  node_args = calloc((size_t)argc + 1, sizeof *node_args);
  const char *workspace = NULL, *dir_option = NULL;
  int usable = argc >= 3 && strcmp(argv[1], "hook") == 0 &&
               (strcmp(argv[2], "claude-code") == 0 || strcmp(argv[2], "gemini-cli") == 0);
  if (usable) agent = argv[2];
  for (int i = 1; i < argc; i++) {
    const char *arg = argv[i], *eq = strchr(arg, '=');
    size_t name = eq != NULL && eq > arg ? (size_t)(eq - arg) : strlen(arg);
    if (i >= 3 && name == 10 && strncmp(arg, "--fallback", 10) == 0) {
      const char *value = eq != NULL ? eq + 1 : (i + 1 < argc ? argv[++i] : NULL);
      if (value == NULL) usable = 0;
      fallback_command = value;
      continue;
    }
    node_args[node_arg_count++] = argv[i];
    if (i < 3 || !usable) continue;
    int is_workspace = name == 11 && strncmp(arg, "--workspace", 11) == 0;
    int is_dir = name == 5 && strncmp(arg, "--dir", 5) == 0;
    if (!is_workspace && !is_dir) { usable = 0; continue; }
    const char *value = eq != NULL ? eq + 1 : (i + 1 < argc ? argv[i + 1] : NULL);
    if (value == NULL) { usable = 0; continue; }
    if (eq == NULL) node_args[node_arg_count++] = argv[++i];
    if (is_workspace) workspace = value;
    else dir_option = value;
  }
  /* The whole payload, as the agent wrote it. */
  for (char chunk[65536];;) {
    ssize_t n = read(0, chunk, sizeof chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    buffer_add(&payload, chunk, (size_t)n);
  }
  buffer_add(&payload, "", 0);
  const char *off = getenv("REWIND_HOOK_SERVER");
  if (!usable || (off != NULL && strcmp(off, "off") == 0)) run_node(NULL);
  if (!utf8_valid((const unsigned char *)payload.data, payload.length)) run_node(NULL);
  jvalue *json = json_parse(payload.data, payload.length);
  /* hasCommonFields (hookInput.ts): else the Node client explains, starting nothing. */
  jvalue *session = json_get(json, "session_id"), *cwd = json_get(json, "cwd"),
         *event = json_get(json, "hook_event_name");
  if (json == NULL || session == NULL || session->type != J_STRING || session->length == 0 || cwd == NULL ||
      cwd->type != J_STRING || event == NULL || event->type != J_STRING || cwd->lone_surrogate)
    run_node(NULL);
  char process_cwd[PATH_MAX];
  if (getcwd(process_cwd, sizeof process_cwd) == NULL) run_node(NULL);
  char *root = workspace_for(workspace, cwd->length > 0 ? cwd->text : process_cwd);
  char *fallback_root = workspace_for(workspace, process_cwd);
  char *dir = dir_option == NULL ? NULL : path_resolve(dir_option);
  if (root == NULL || fallback_root == NULL || (dir_option != NULL && dir == NULL)) run_node(NULL);
  char *store = dir != NULL ? dir : path_join(root, ".rewind");
  char *fallback_store = dir != NULL ? dir : path_join(fallback_root, ".rewind");
  const char *texts[] = {root, store, fallback_store};
  for (int i = 0; i < 3; i++)
    if (!utf8_valid((const unsigned char *)texts[i], strlen(texts[i]))) run_node(NULL);
  char *path = socket_path(root, store);
  if (path == NULL) run_node(NULL);
  int fd = socket(AF_UNIX, SOCK_STREAM, 0);
  struct sockaddr_un address = {0};
  address.sun_family = AF_UNIX;
  memcpy(address.sun_path, path, strlen(path) + 1);
  /* No server (no socket, or a killed server's leftover): the Node client starts one. */
  if (fd < 0 || connect(fd, (struct sockaddr *)&address, sizeof address) != 0) run_node(NULL);
#ifdef SO_NOSIGPIPE
  int one = 1;
  setsockopt(fd, SOL_SOCKET, SO_NOSIGPIPE, &one, sizeof one);
#endif
  fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
  socket_path_sent = path;
  store_dir = store;
  buffer request = {0};
  buffer_str(&request, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"hook\",\"params\":[{\"agent\":");
  buffer_json_string(&request, agent);
  buffer_str(&request, ",\"json\":");
  /* The payload as read: valid JSON, whose raw CR and LF can only be whitespace (inside a string
   * they must be escaped), so blanking them makes it one line of the server's protocol. */
  size_t at = request.length;
  buffer_add(&request, payload.data, payload.length);
  for (size_t i = at; i < request.length; i++)
    if (request.data[i] == '\n' || request.data[i] == '\r') request.data[i] = ' ';
  buffer_str(&request, ",\"workspaceRoot\":");
  buffer_json_string(&request, root);
  buffer_str(&request, ",\"storeDir\":");
  buffer_json_string(&request, store);
  buffer_str(&request, ",\"fallbackStoreDir\":");
  buffer_json_string(&request, fallback_store);
  if (dir != NULL) {
    buffer_str(&request, ",\"dir\":");
    buffer_json_string(&request, dir);
  }
  buffer_str(&request, "}]}\n");
  jvalue *message = exchange(fd, &request, number_setting("REWIND_HOOK_TIMEOUT_MS", 30000));
  close(fd);
  /* An error or a refusal: the server did not apply it, and the Node client runs it itself. */
  jvalue *error = json_get(message, "error");
  if (error != NULL) {
    jvalue *text = json_get(error, "message");
    buffer why = {0};
    buffer_str(&why, "the server answered an error: ");
    buffer_str(&why, text != NULL && text->type == J_STRING ? text->text : "(no message)");
    run_node(why.data);
  }
  jvalue *result = json_get(message, "result");
  jvalue *ok = json_get(result, "ok"), *value = json_get(result, "value");
  if (ok == NULL || ok->type != J_TRUE || value == NULL) {
    jvalue *refusal = json_get(json_get(result, "refusal"), "message");
    buffer why = {0};
    buffer_str(&why, "the server on ");
    buffer_str(&why, path);
    buffer_str(&why, " refused the event (");
    buffer_str(&why, refusal != NULL && refusal->type == J_STRING ? refusal->text : "no answer");
    buffer_str(&why, ")");
    run_node(why.data);
  }
  jvalue *out = json_get(value, "stdout"), *problems = json_get(value, "problems");
  int shaped = out != NULL && out->type == J_STRING && problems != NULL && problems->type == J_ARRAY;
  for (size_t i = 0; shaped && i < problems->count; i++) shaped = problems->items[i]->type == J_STRING;
  if (!shaped) unanswered("its answer is not a hook result");
  write_all(1, out->text, out->length);
  for (size_t i = 0; i < problems->count; i++) {
    write_all(2, problems->items[i]->text, problems->items[i]->length);
    write_all(2, "\n", 1);
  }
  return 0;
}
