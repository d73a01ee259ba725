/**
 * The one derivation of a fixed-length key from a LangGraph thread id, shared by the checkpoint
 * saver's session ids and the file tracker's: thread ids are free text of any length, session ids
 * are not, and two places deriving them separately could drift apart and stop finding each other's
 * sessions. Forty hex digits of SHA-256 keep collisions out of reach for any realistic number of
 * threads.
 */
import { createHash } from "node:crypto"

export const threadDigest = (threadId: string): string =>
  createHash("sha256").update(threadId, "utf8").digest("hex").slice(0, 40)
