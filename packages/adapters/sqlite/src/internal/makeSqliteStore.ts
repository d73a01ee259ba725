/**
 * Opening a store with a given migration list: validates the options, opens and migrates the file,
 * and builds the services over it. Tests pass extra migrations here to exercise upgrades.
 */
import { StoreError, type StoreIncompatible } from "@rewind/contracts"
import { Effect, ParseResult, Schema, type Scope } from "effect"
import type { SqliteStoreService } from "../SqliteSessionStore.js"
import { resolveOptions, SqliteStoreOptions } from "../SqliteStoreOptions.js"
import type { StoreMigration } from "./migrations.js"
import { openDatabase } from "./openDatabase.js"
import { readOnlyReason } from "./sqliteErrors.js"
import { makeStoreService } from "./storeService.js"

export const makeSqliteStore = (
  options: SqliteStoreOptions,
  migrations: ReadonlyArray<StoreMigration>,
): Effect.Effect<SqliteStoreService, StoreIncompatible | StoreError, Scope.Scope> =>
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
    const opened = yield* openDatabase(resolveOptions(valid), migrations)
    const internals = yield* makeStoreService(opened)
    return {
      ...internals,
      location: opened.location,
      schemaVersion: opened.schemaVersion,
      settings: opened.settings,
      migrationsApplied: opened.migrationsApplied,
      backupPath: opened.backupPath,
      readOnly: Effect.sync(() => readOnlyReason(opened.location)),
    }
  })
