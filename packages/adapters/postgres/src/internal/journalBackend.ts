/**
 * PostgreSQL's backend for the shared SQL operation journal. Writes run at READ COMMITTED with the
 * operation's row locked (`FOR UPDATE`) before its status is checked, so workers on different
 * machines completing or stepping one operation take turns; a deadlock or serialization failure
 * runs the transaction again (like the session store's). Reads run in one REPEATABLE READ, read
 * only transaction, so an operation and its steps come from the same snapshot. A transaction is
 * uninterruptible once started: a caller learns whether its intent is durable.
 */
import { StoreError } from "@rewind/contracts"
import type { OperationJournalBackend, OperationJournalTables } from "@rewind/kysely-store"
import { Effect } from "effect"
import type { Kysely } from "kysely"
import type { PostgresDatabaseService } from "../PostgresDatabase.js"
import { isRetryable, Retryable, retryRetryable, toStoreError } from "./pgErrors.js"

export const makeJournalBackend = (database: PostgresDatabaseService): OperationJournalBackend => {
  const { location, options } = database
  const db = database.kysely as unknown as Kysely<OperationJournalTables>
  return {
    kysely: db,
    rowLocks: true,
    writeTransaction: (operation, body) =>
      retryRetryable(
        Effect.uninterruptible(
          Effect.tryPromise({
            try: () => db.transaction().execute(body),
            catch: (error) =>
              error instanceof StoreError
                ? error
                : isRetryable(error)
                  ? new Retryable({ operation, cause: error })
                  : toStoreError(operation, error, location),
          }),
        ),
        options.maxTransactionAttempts,
        location,
      ),
    read: (operation, body) =>
      Effect.tryPromise({
        try: () =>
          db.transaction().setIsolationLevel("repeatable read").setAccessMode("read only").execute(body),
        catch: (error) => (error instanceof StoreError ? error : toStoreError(operation, error, location)),
      }),
  }
}
