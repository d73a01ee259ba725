/**
 * The store health check behind `Rewind.doctor` and `rewind doctor`: SQLite's own integrity check
 * (when the store is SQLite) and a read of every blob, which re-hashes it against its address.
 */

import { SqliteSessionStore } from "@rewind/adapter-sqlite"
import type { ContentHash } from "@rewind/contracts"
import { ArtifactStore } from "@rewind/core"
import { Effect, Option, Stream } from "effect"

export interface DoctorReport {
  /** True when every check passed. */
  readonly ok: boolean
  /** SQLite `integrity_check` and `foreign_key_check`; absent when the store is not SQLite. */
  readonly database: { readonly ok: boolean; readonly problems: ReadonlyArray<string> } | undefined
  readonly artifacts: {
    readonly checked: number
    readonly bytes: number
    /** Blobs whose bytes no longer hash to their address, or that could not be read. */
    readonly bad: ReadonlyArray<{ readonly hash: ContentHash; readonly problem: string }>
  }
}

export const runDoctor = (onProgress?: (checked: number) => void) =>
  Effect.gen(function* () {
    const sqlite = yield* Effect.serviceOption(SqliteSessionStore.SqliteStore)
    const database = Option.isSome(sqlite) ? yield* sqlite.value.integrityCheck : undefined
    const artifacts = yield* ArtifactStore
    const bad: Array<{ hash: ContentHash; problem: string }> = []
    let checked = 0
    let bytes = 0
    yield* artifacts.list().pipe(
      Stream.runForEach((info) =>
        artifacts.get(info.hash).pipe(
          Effect.match({
            onFailure: (error) => {
              bad.push({ hash: info.hash, problem: `${error._tag}: ${error.message}` })
            },
            onSuccess: (content) => {
              bytes += content.byteLength
            },
          }),
          Effect.tap(() => {
            checked++
            onProgress?.(checked)
          }),
        ),
      ),
    )
    const report: DoctorReport = {
      ok: (database?.ok ?? true) && bad.length === 0,
      database: database === undefined ? undefined : { ok: database.ok, problems: database.problems },
      artifacts: { checked, bytes, bad },
    }
    return report
  })
