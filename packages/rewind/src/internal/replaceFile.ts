/**
 * Replacing a small file of Rewind's own whole (an agent's settings file, the hook problem log,
 * a code cache): written beside it under a unique name, created exclusively so nothing already there
 * is followed or overwritten, then renamed over it, so a reader sees the old file or the new one and
 * never half of either. The temp file is removed when the write or the rename fails. Node built-ins
 * only: the code cache uses it before anything else is loaded.
 */
import { randomBytes } from "node:crypto"
import { chmodSync, renameSync, unlinkSync, writeFileSync } from "node:fs"

/** Replaces `file` by `data`; `mode`, when given, is the new file's mode exactly (not left to the umask). */
export const replaceFile = (file: string, data: string | Uint8Array, mode?: number): void => {
  const temp = `${file}.${process.pid}.${randomBytes(4).toString("hex")}.tmp`
  writeFileSync(temp, data, { flag: "wx", ...(mode === undefined ? {} : { mode }) })
  try {
    if (mode !== undefined) chmodSync(temp, mode)
    renameSync(temp, file)
  } catch (error) {
    try {
      unlinkSync(temp)
    } catch {
      // Gone already: nothing left behind.
    }
    throw error
  }
}
