/**
 * Hashing, in one place (the workspace capability's): the SHA-256 of a file's bytes is its address
 * in the artifact store and what preview/apply compares, and the same digest, of text, derives
 * every stable id and plan digest core makes (point ids, carry lineages, preview-token and plan
 * digests). Hashing is pure (node:crypto), so core may do it itself; this is core's only import of
 * it. Text is hashed as its UTF-8 bytes, so `sha256Hex(text)` equals the digest of the encoded text.
 */
import { createHash, hash as oneShotHash } from "node:crypto"
import type { ContentHash } from "@rewind/contracts"

const encoder = new TextEncoder()

/** The bytes of text as UTF-8, or the bytes themselves. */
export const toBytes = (content: Uint8Array | string): Uint8Array =>
  typeof content === "string" ? encoder.encode(content) : content

/** The SHA-256 of bytes, or of text as UTF-8, as 64 lowercase hex digits. */
export const sha256Hex = (content: Uint8Array | string): string =>
  createHash("sha256").update(toBytes(content)).digest("hex")

/**
 * The SHA-256 of a short text as UTF-8, as hex, for callers that hash many (a tracked table's
 * ten thousand directories): one call without a hash object or an encoded copy, where Node has it.
 */
export const sha256HexOfText = (text: string): string =>
  typeof oneShotHash === "function"
    ? oneShotHash("sha256", text, "hex")
    : createHash("sha256").update(text, "utf8").digest("hex")

/** The content address of a file's bytes (or of text as UTF-8). */
export const hashContent = (content: Uint8Array | string): ContentHash => sha256Hex(content) as ContentHash

/**
 * The content address of a text given in pieces (the address of their concatenation as UTF-8),
 * without building the whole text: `pieces` hands each piece to `put`, in order. A piece must not
 * end inside a surrogate pair (a whole string from JSON.stringify never does).
 */
export const hashPieces = (pieces: (put: (text: string) => void) => void): ContentHash => {
  const hash = createHash("sha256")
  pieces((text) => hash.update(text, "utf8"))
  return hash.digest("hex") as ContentHash
}

/**
 * Whether `content` ends with its own digest under `algorithm` (the trailer git writes after its
 * index): what tells a SHA-1 repository's index from a SHA-256 one's, and a whole file from one
 * read half way through a rewrite.
 */
export const endsWithDigest = (content: Uint8Array, algorithm: "sha1" | "sha256"): boolean => {
  const size = algorithm === "sha1" ? 20 : 32
  if (content.byteLength < size) return false
  const digest = createHash(algorithm)
    .update(content.subarray(0, content.byteLength - size))
    .digest()
  return sameBytes(digest, content.subarray(content.byteLength - size))
}

/** Byte-for-byte equality, for comparisons that must not depend on a hash. */
export const sameBytes = (a: Uint8Array, b: Uint8Array): boolean => {
  if (a.byteLength !== b.byteLength) return false
  for (let i = 0; i < a.byteLength; i++) if (a[i] !== b[i]) return false
  return true
}
