/**
 * Every command of the `rewind` CLI, in the order `rewind --help` lists them. Each command group
 * lives in its own module; each opens the store as store.ts says (the `Rewind` service in Effect),
 * prints human text or JSON Lines, and fails with a `CliFailure` carrying its exit code.
 */

import { diff } from "./diffCommand.js"
import { doctor } from "./doctorCommand.js"
import { fork } from "./forkCommand.js"
import { hook, install, uninstall } from "./hookCommands.js"
import { preview } from "./previewCommand.js"
import { recover, redo } from "./recoveryCommands.js"
import { cascade, restore } from "./restoreCommands.js"
import { init, log, sessions } from "./sessionCommands.js"
import { capture, gc, points } from "./snapshotCommands.js"
import { status } from "./statusCommand.js"
import { merge } from "./treeCommands.js"
import { timeline } from "./turnCommands.js"

/** Every registered command, in the order `rewind --help` lists them. */
export const commands = [
  init,
  sessions,
  log,
  status,
  capture,
  points,
  diff,
  preview,
  restore,
  cascade,
  redo,
  fork,
  merge,
  recover,
  gc,
  doctor,
  hook,
  install,
  uninstall,
  timeline,
] as const
