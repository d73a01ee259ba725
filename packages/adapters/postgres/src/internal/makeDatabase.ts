/**
 * Opening a database with a given migration list: validates the options, opens the pool and
 * migrates the schema. Tests pass extra migrations here to exercise upgrades and newer stores.
 */
import { StoreError, type StoreIncompatible } from "@rewind/contracts"
import type { StoreMigration } from "@rewind/kysely-store"
import { Effect, ParseResult, Schema, type Scope } from "effect"
import { PostgresStoreOptions, resolveOptions } from "../PostgresStoreOptions.js"
import { type OpenedDatabase, openDatabase } from "./openDatabase.js"

export const makeDatabase = (
  options: PostgresStoreOptions,
  migrations: ReadonlyArray<StoreMigration>,
): Effect.Effect<OpenedDatabase, StoreIncompatible | StoreError, Scope.Scope> =>
  Effect.gen(function* () {
    const valid = yield* Schema.decodeUnknown(PostgresStoreOptions)(options).pipe(
      Effect.mapError(
        (error) =>
          new StoreError({
            operation: "open",
            message: `invalid PostgreSQL store options: ${ParseResult.TreeFormatter.formatErrorSync(error)}`,
          }),
      ),
    )
    return yield* openDatabase(resolveOptions(valid), migrations)
  })
