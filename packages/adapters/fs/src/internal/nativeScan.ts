/**
 * The native directory scanner (`native/dirscan.c`, built by `node-gyp` when the package is
 * installed): `readdir` + `lstat` + `readlink` of many directories in one call, on a few threads.
 * A repeat capture of a large workspace is almost all stat calls, and through `node:fs` each one
 * costs a JavaScript call and a Stats object on top of the system call. Optional: where the
 * module was not built (no compiler at install time, an unsupported platform), `nativeScanner`
 * is undefined and the JavaScript scanner is used; both give the same answers.
 */

import { createRequire } from "node:module"
import { availableParallelism } from "node:os"
import { getSystemErrorMap } from "node:util"
import type { FileKind } from "@rewind/contracts"
import type { ScannedEntry } from "@rewind/core"
import { Either } from "effect"
import type { ErrnoFailure } from "./durable.js"

interface NativeListing {
  readonly names: ReadonlyArray<string>
  /** kind, size, mode per entry. */
  readonly numbers: Float64Array
  /** mtimeNs, ctimeNs per entry. */
  readonly times: BigInt64Array
  readonly inodes: BigUint64Array
  /** A symlink's target at its index. */
  readonly targets: ReadonlyArray<string | undefined>
}

interface NativeFailure {
  readonly errno: number
  readonly syscall: string
  readonly path: string
}

interface DirScanModule {
  readonly scan: (
    paths: ReadonlyArray<string>,
    threads: number,
  ) => ReadonlyArray<NativeListing | NativeFailure>
}

const KINDS: ReadonlyArray<FileKind> = ["file", "directory", "symlink", "other"]

/** Below this many directories in a call, helper threads cost more than they save. */
const THREADED_FROM = 16

const load = (): DirScanModule | undefined => {
  try {
    // The same relative place from `src/internal` (tests) and `dist/internal` (the build).
    return createRequire(import.meta.url)("../../build/Release/dirscan.node") as DirScanModule
  } catch {
    return undefined
  }
}

const failureOf = ({ errno, syscall, path }: NativeFailure): ErrnoFailure => {
  // Node's own code and wording for the errno (`uv` numbers errors negatively on POSIX).
  const [code, description] = getSystemErrorMap().get(-errno) ?? [`E${errno}`, `error ${errno}`]
  return { code, message: `${code}: ${description}, ${syscall} '${path}'` }
}

const entriesOf = (listing: NativeListing): Array<ScannedEntry> => {
  const { names, numbers, times, inodes, targets } = listing
  const out: Array<ScannedEntry> = new Array(names.length)
  for (let i = 0; i < names.length; i++) {
    const stat = {
      kind: KINDS[numbers[3 * i]!]!,
      size: numbers[3 * i + 1]!,
      mode: numbers[3 * i + 2]!,
      mtimeNs: times[2 * i]!,
      ctimeNs: times[2 * i + 1]!,
      inode: inodes[i]!,
    }
    const target = targets[i]
    out[i] = target === undefined ? { name: names[i]!, stat } : { name: names[i]!, stat, target }
  }
  return out
}

export type NativeScanner = (
  absolutes: ReadonlyArray<string>,
) => Array<Either.Either<ReadonlyArray<ScannedEntry>, ErrnoFailure>>

const makeScanner = (module: DirScanModule): NativeScanner => {
  const threads = Math.max(1, Math.min(4, availableParallelism()))
  return (absolutes) =>
    module
      .scan(absolutes, absolutes.length >= THREADED_FROM ? threads : 1)
      .map((r) => ("errno" in r ? Either.left(failureOf(r)) : Either.right(entriesOf(r))))
}

const loaded = load()

/** The native scanner, or undefined where the module is not built. */
export const nativeScanner: NativeScanner | undefined = loaded === undefined ? undefined : makeScanner(loaded)
