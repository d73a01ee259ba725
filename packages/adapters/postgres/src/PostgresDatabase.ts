/**
 * One PostgreSQL store opened by this process: its connection pool and migrated schema, shared by
 * the session store and the artifact store built on it. The pool closes with the layer's scope.
 */
import type { StoreError, StoreIncompatible } from "@rewind/contracts"
import { layerFromConfig } from "@rewind/kysely-store"
import { type Config, Context, Effect, Layer, type Scope } from "effect"
import type { Kysely } from "kysely"
import { makeDatabase } from "./internal/makeDatabase.js"
import { POSTGRES_MIGRATIONS } from "./internal/migrations.js"
import type { OpenedDatabase } from "./internal/openDatabase.js"
import type { PostgresTables } from "./internal/tables.js"
import {
  type PostgresStoreOptions,
  postgresStoreConfig,
  type ResolvedPostgresStoreOptions,
} from "./PostgresStoreOptions.js"

export type { ArtifactsTable, PostgresTables } from "./internal/tables.js"

export interface PostgresDatabaseService {
  /** Kysely over the pool; every connection's `search_path` is the store's schema. */
  readonly kysely: Kysely<PostgresTables>
  /** The options in force, defaults filled in. */
  readonly options: ResolvedPostgresStoreOptions
  /** The URL without its password, and the schema. */
  readonly location: string
  readonly schemaVersion: number
  /** Migrations this open applied, oldest first (empty when the store was already current). */
  readonly migrationsApplied: ReadonlyArray<string>
  readonly serverVersion: string
}

export class PostgresDatabase extends Context.Tag("@rewind/adapter-postgres/PostgresDatabase")<
  PostgresDatabase,
  PostgresDatabaseService
>() {}

export const fromOpened = (opened: OpenedDatabase): PostgresDatabaseService => ({
  kysely: opened.kysely,
  options: opened.options,
  location: opened.location,
  schemaVersion: opened.schemaVersion,
  migrationsApplied: opened.migrationsApplied,
  serverVersion: opened.serverVersion,
})

/** Opens the pool and migrates the schema; the pool closes when the scope does. */
export const make = (
  options: PostgresStoreOptions,
): Effect.Effect<PostgresDatabaseService, StoreIncompatible | StoreError, Scope.Scope> =>
  Effect.map(makeDatabase(options, POSTGRES_MIGRATIONS), fromOpened)

export const layer = (
  options: PostgresStoreOptions,
): Layer.Layer<PostgresDatabase, StoreIncompatible | StoreError> =>
  Layer.scoped(PostgresDatabase, make(options))

/** Like `layer`, reading its options from `Config` (by default the `REWIND_PG_*` variables). */
export const layerConfig = (
  config: Config.Config<PostgresStoreOptions> = postgresStoreConfig,
): Layer.Layer<PostgresDatabase, StoreIncompatible | StoreError> =>
  layerFromConfig("PostgreSQL store", config, layer)
