/* Node's path rules the native hook client needs to find the same workspace, store and socket
 * as the Node hook client (hookInput.ts, server/workspaceSocket.ts): path.resolve, path.join,
 * fs.realpathSync with resolve as its fallback, and os.tmpdir. Results are malloc'd. */
#ifndef REWIND_PATHS_H
#define REWIND_PATHS_H

/* path.normalize of an absolute or relative POSIX path (no trailing slash but for "/"). */
char *path_normalize(const char *path);
/* path.join(a, b). */
char *path_join(const char *a, const char *b);
/* path.resolve(path) against the process's working directory; NULL when that is unknown. */
char *path_resolve(const char *path);
/* realpathSync(path), or path_resolve(path) when it cannot be resolved (hookMethod.ts' `real`). */
char *path_real(const char *path);
/* os.tmpdir() on POSIX: TMPDIR, TMP, TEMP or /tmp, without a trailing slash. */
char *temp_dir(void);
/* fs.existsSync(path). */
int path_exists(const char *path);
/* mkdirSync(path, { recursive: true, mode }): 0, or -1 (errno set). */
int make_dirs(const char *path, int mode);

#endif
