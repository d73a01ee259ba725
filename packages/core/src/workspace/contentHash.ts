/**
 * Content addressing: the SHA-256 of a file's bytes is its address in the artifact store and what
 * preview/apply compares. Hashing is pure (node:crypto), so core may do it itself.
 */
import { createHash } from "node:crypto"
import type { ContentHash } from "@rewind/contracts"

const encoder = new TextEncoder()

/** The bytes of text as UTF-8, or the bytes themselves. */
export const toBytes = (content: Uint8Array | string): Uint8Array =>
  typeof content === "string" ? encoder.encode(content) : content

export const hashContent = (content: Uint8Array | string): ContentHash =>
  createHash("sha256").update(toBytes(content)).digest("hex") as ContentHash

/** Byte-for-byte equality, for comparisons that must not depend on a hash. */
export const sameBytes = (a: Uint8Array, b: Uint8Array): boolean => {
  if (a.byteLength !== b.byteLength) return false
  for (let i = 0; i < a.byteLength; i++) if (a[i] !== b[i]) return false
  return true
}
