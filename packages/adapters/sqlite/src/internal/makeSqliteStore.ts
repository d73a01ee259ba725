/**
 * Opening a store with a given migration list: validates the options, opens and migrates the file
 * into a `SqliteDatabase` (the connection and what its stores share), and builds the adapter's
 * services over one. Tests pass extra migrations here to exercise upgrades.
 */
import { StoreError, type StoreIncompatible } from "@rewind/contracts"
import { Effect, ParseResult, Schema, type Scope } from "effect"
import type { SqliteStoreService } from "../SqliteSessionStore.js"
import { resolveOptions, SqliteStoreOptions } from "../SqliteStoreOptions.js"
import { makeConnection, type SqliteConnection } from "./connection.js"
import type { StoreMigration } from "./migrations.js"
import { openDatabase } from "./openDatabase.js"
import { makeStoreService } from "./storeService.js"

export const openSqliteDatabase = (
  options: SqliteStoreOptions,
  migrations: ReadonlyArray<StoreMigration>,
): Effect.Effect<SqliteConnection, StoreIncompatible | StoreError, Scope.Scope> =>
  Effect.gen(function* () {
    const valid = yield* Schema.decodeUnknown(SqliteStoreOptions)(options).pipe(
      Effect.mapError(
        (error) =>
          new StoreError({
            operation: "open",
            message: `invalid SQLite store options: ${ParseResult.TreeFormatter.formatErrorSync(error)}`,
          }),
      ),
    )
    return yield* makeConnection(yield* openDatabase(resolveOptions(valid), migrations))
  })

/** The adapter's own service over an opened database. */
export const storeFromDatabase = (database: SqliteConnection): SqliteStoreService => ({
  ...makeStoreService(database),
  location: database.location,
  schemaVersion: database.schemaVersion,
  settings: database.settings,
  migrationsApplied: database.migrationsApplied,
  backupPath: database.backupPath,
  readOnly: database.readOnly,
})

export const makeSqliteStore = (
  options: SqliteStoreOptions,
  migrations: ReadonlyArray<StoreMigration>,
): Effect.Effect<SqliteStoreService, StoreIncompatible | StoreError, Scope.Scope> =>
  Effect.map(openSqliteDatabase(options, migrations), storeFromDatabase)
