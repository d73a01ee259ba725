/**
 * What the Workspace port reports about a path: its kind, size, permission bits and the stat fields
 * a snapshot engine needs for a stat cache (nanosecond times and inode, as bigints so nothing is
 * rounded; they encode as decimal strings on the wire).
 */
import { Schema } from "effect"

/** `other` covers FIFOs, sockets and devices: never read or written by Rewind. */
export const FileKind = Schema.Literal("file", "directory", "symlink", "other")
export type FileKind = typeof FileKind.Type

/** A kind as a message says it ("a directory", "a FIFO, socket or device"): one wording everywhere. */
export const aFileKind = (kind: FileKind): string =>
  kind === "other" ? "a FIFO, socket or device" : `a ${kind}`

export const FileStat = Schema.Struct({
  kind: FileKind,
  size: Schema.Number.pipe(Schema.int(), Schema.nonNegative()),
  /** Permission bits only (`st_mode & 0o7777`). */
  mode: Schema.Number.pipe(Schema.int(), Schema.between(0, 0o7777)),
  mtimeNs: Schema.BigInt,
  ctimeNs: Schema.BigInt,
  inode: Schema.BigInt,
})
export type FileStat = typeof FileStat.Type

/** One entry of a directory listing; `name` is a single path segment as the filesystem spells it. */
export const DirectoryEntry = Schema.Struct({
  name: Schema.String,
  kind: FileKind,
})
export type DirectoryEntry = typeof DirectoryEntry.Type

/**
 * Why the protection policy keeps Rewind's hands off a path: `store` (Rewind's own store, wherever
 * its directory lies inside the root, and any `.rewind` directory), `vcs` (a `.git` directory or
 * file at any depth, and everything under one), `ignored` (excluded by the ignore rules, which
 * apply both ways: never captured, never restored over), `escaping_link` (a symlink whose target
 * leads outside the root, where it stands or where a point has it: no restore makes one, and so
 * none takes one away either, since no redo could make it again).
 */
export const ProtectionKind = Schema.Literal("store", "vcs", "ignored", "escaping_link")
export type ProtectionKind = typeof ProtectionKind.Type

export const ProtectedPath = Schema.Struct({
  path: Schema.String,
  kind: ProtectionKind,
  message: Schema.String,
})
export type ProtectedPath = typeof ProtectedPath.Type
