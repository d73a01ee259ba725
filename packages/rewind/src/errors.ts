/**
 * Errors of the facade itself (the engine's own errors live in @rewind/contracts): a store that
 * was asked to be opened but does not exist, one it will not open where it lies, a workspace root
 * that is not a directory, and a call on an instance already closed.
 */
import { Schema } from "effect"

/** `openRewind({ create: false })` found no store at the expected place; nothing was created. */
export class StoreMissing extends Schema.TaggedError<StoreMissing>()("StoreMissing", {
  path: Schema.String,
  message: Schema.String,
}) {}

/** A call on a Rewind after `close()`: nothing ran; open a new instance with `openRewind`. */
export class RewindClosed extends Schema.TaggedError<RewindClosed>()("RewindClosed", {
  method: Schema.String,
  message: Schema.String,
}) {}

/**
 * The embedded default will not open the store where it lies, and changed nothing there:
 * `symlink` — the default store directory (`.rewind`) or the database file (`rewind.db`, its
 * `-wal`, `-shm` or `-journal`) is a symbolic link, so opening it would read and write wherever the
 * link leads; `empty_file` — `rewind.db` is 0 bytes (what a crash can leave), so creating a store
 * there would silently replace whatever was meant to be in it; `too_broad` — no store exists and
 * the workspace is the home directory or the filesystem root, where one would capture every project
 * and secret below it (made only with `allowBroadWorkspace`, the CLI's `init --force`).
 */
export class StoreRefused extends Schema.TaggedError<StoreRefused>()("StoreRefused", {
  reason: Schema.Literal("symlink", "empty_file", "too_broad"),
  path: Schema.String,
  message: Schema.String,
}) {}

/**
 * The store this Rewind opened was removed or replaced since (`rm -rf .rewind` and `rewind init`,
 * a fresh clone of the workspace, a database copied back from a backup): its directory or its
 * database file is gone, or another one is at its path. Nothing ran: writing on would go into the
 * unlinked file and be lost with it. Every later call of this instance is refused the same way;
 * open a new one on the store as it is now. The servers stop on it, so their clients run the call
 * themselves and the next one starts a server on the current store.
 */
export class StoreReplaced extends Schema.TaggedError<StoreReplaced>()("StoreReplaced", {
  path: Schema.String,
  message: Schema.String,
}) {}

/**
 * The embedded default will not open Rewind on `workspaceRoot` because it is no directory it can
 * work in: `missing` — nothing is there (a mistyped path would otherwise be made, with a store in
 * it, and every capture would be of an empty tree); `not_a_directory` — it is a file or another
 * kind of entry; `unreadable` — its status could not be read (permissions). Nothing was created.
 */
export class WorkspaceUnusable extends Schema.TaggedError<WorkspaceUnusable>()("WorkspaceUnusable", {
  reason: Schema.Literal("missing", "not_a_directory", "unreadable"),
  path: Schema.String,
  message: Schema.String,
}) {}
