/**
 * Doctor's first step: the database's own integrity, its schema version and whether this process
 * can write it, all through core's StoreIntegrity port (each SQL adapter provides it: SQLite's
 * pragmas, PostgreSQL's streams against events, and the streams check they share). A store
 * without the port (the in-memory one) has no database section: nothing is claimed about it.
 */
import { StoreIntegrity } from "@rewind/core"
import { Effect, Option } from "effect"
import type { Findings } from "./findings.js"
import type { DoctorReport } from "./report.js"

export const checkDatabase = (
  findings: Findings,
): Effect.Effect<Pick<DoctorReport, "database" | "schemaVersion">> =>
  Effect.gen(function* () {
    const port = yield* Effect.serviceOption(StoreIntegrity)
    if (Option.isNone(port)) return { database: undefined, schemaVersion: undefined }
    const integrity = port.value
    // A damaged file can make the check itself fail (SQLITE_CORRUPT): that is a finding, not a crash.
    const checked = yield* integrity.check.pipe(
      Effect.catchAll((error) => Effect.succeed({ ok: false, problems: [error.message] })),
    )
    for (const p of checked.problems) findings.problem("database_integrity", "database", p)
    const readOnly = yield* integrity.readOnly
    if (readOnly !== undefined) findings.problem("store_read_only", integrity.location, readOnly)
    return {
      database: { kind: integrity.kind, ok: checked.ok, problems: checked.problems },
      schemaVersion: integrity.schemaVersion,
    }
  })

/** Why the store in context cannot be written now (stores with a StoreIntegrity port), for the CLI's warning. */
export const storeReadOnly: Effect.Effect<string | undefined> = Effect.flatMap(
  Effect.serviceOption(StoreIntegrity),
  Option.match({ onNone: () => Effect.succeed(undefined), onSome: (store) => store.readOnly }),
)
