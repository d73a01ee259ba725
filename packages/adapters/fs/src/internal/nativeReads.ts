/**
 * A capture's bulk reads on a thread of libuv's pool (`native/readbatch.c`): a group of files read
 * beneath the root with each content's SHA-256, while the main thread stores the group before. The
 * confinement and the hold-still rule are those of the JavaScript `readFiles` + `readHeldStill`
 * (beneath.ts, stableRead.ts); a file the native side declines is `undefined`, which the workspace
 * reads the walked way, with the retries and the answer (or error) of a read on its own.
 *
 * The contents of one call share one ArrayBuffer (views into it, never transferred or detached, as
 * the pooled buffers of `readOpened` are). Where the module is missing, older than this function,
 * or disabled (`REWIND_NATIVE_READS=off`), `nativeReadsStatus` says why, and `rewind doctor` and
 * `rewind status` report it: the reads then run on the main thread as before.
 */
import type { ContentHash } from "@rewind/contracts"
import type { WorkspaceFile } from "@rewind/core"
import { nativeModule } from "./nativeModule.js"
import { HOLD_STILL_WINDOWS_NS } from "./stableRead.js"

interface ReadBatch {
  readonly buffer: ArrayBuffer
  /** [offset, length, mode] per file; mode -1: declined. */
  readonly table: Float64Array
  /** 64 hex digits per file (latin1); null when this Node exports no SHA256 to addons (the caller hashes). */
  readonly digests: Buffer | null
}

interface ReadBatchModule {
  readonly readFilesBeneath: (
    root: string,
    relatives: ReadonlyArray<string>,
    walk: boolean,
    windows: readonly [number, number, number],
  ) => Promise<ReadBatch | null>
}

const hasReads = (m: unknown): m is ReadBatchModule =>
  typeof (m as Partial<ReadBatchModule> | undefined)?.readFilesBeneath === "function"

const disabled = process.env.REWIND_NATIVE_READS === "off"

const module_: ReadBatchModule | undefined = !disabled && hasReads(nativeModule) ? nativeModule : undefined

/** Where a capture's reads run: on a native pool thread, or on the main thread (and why). */
export type NativeReadsStatus =
  | { readonly reads: "native-thread" }
  | { readonly reads: "main-thread"; readonly reason: string }

export const nativeReadsStatus: NativeReadsStatus =
  module_ !== undefined
    ? { reads: "native-thread" }
    : {
        reads: "main-thread",
        reason: disabled
          ? "disabled by REWIND_NATIVE_READS=off"
          : nativeModule === undefined
            ? "the native module did not load"
            : "the native module has no readFilesBeneath (built from older sources: rebuild it)",
      }

/**
 * The native batch read for one root (absolute, symlink-free), or undefined without it. The
 * promise answers every file `undefined` when the root itself cannot be opened; it rejects only
 * when the batch could not run at all (the caller then reads on the main thread).
 */
export const makeNativeReads = (root: string, walk: boolean) => {
  const native = module_
  if (native === undefined) return undefined
  return async (relatives: ReadonlyArray<string>): Promise<Array<WorkspaceFile | undefined>> => {
    const batch = await native.readFilesBeneath(root, relatives, walk, HOLD_STILL_WINDOWS_NS)
    const out = new Array<WorkspaceFile | undefined>(relatives.length)
    if (batch === null) return out
    const { buffer, table, digests } = batch
    for (let i = 0; i < relatives.length; i++) {
      const mode = table[3 * i + 2]!
      if (mode < 0) continue
      const content = new Uint8Array(buffer, table[3 * i]!, table[3 * i + 1]!)
      out[i] =
        digests === null
          ? { content, mode }
          : { content, mode, hash: digests.toString("latin1", 64 * i, 64 * i + 64) as ContentHash }
    }
    return out
  }
}
