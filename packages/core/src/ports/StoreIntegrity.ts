/**
 * The StoreIntegrity port: a SQL store's own consistency check, supplied by the adapter that owns
 * the database (SQLite: `integrity_check` and `foreign_key_check`; PostgreSQL: every stream's
 * version against its events), so a health check asks the port and never names an adapter. A store
 * without such a check (the in-memory one) provides no StoreIntegrity; callers take it with
 * `Effect.serviceOption` and report "no database check" rather than "healthy".
 *
 * `check` reports findings as data; it fails only when the check cannot run (a store damaged enough
 * may fail it: a caller reports that failure as a finding too).
 */
import type { StoreError } from "@rewind/contracts"
import { Context, type Effect } from "effect"

export interface StoreIntegrityReport {
  readonly ok: boolean
  /** One sentence per finding; empty when ok. */
  readonly problems: ReadonlyArray<string>
}

export interface StoreIntegrityService {
  /** Which database this is, for reports: `sqlite`, `postgresql`. */
  readonly kind: string
  /** Where it is (a file path, or a URL without its password and the schema). */
  readonly location: string
  readonly schemaVersion: number
  readonly check: Effect.Effect<StoreIntegrityReport, StoreError>
  /**
   * Why this process cannot write the store now, or undefined when it can (SQLite opens a
   * read-only file without failing, and every write then fails).
   */
  readonly readOnly: Effect.Effect<string | undefined>
}

export class StoreIntegrity extends Context.Tag("@rewind/core/StoreIntegrity")<
  StoreIntegrity,
  StoreIntegrityService
>() {}
