/**
 * SQLite's backend for the shared SQL operation journal of `@rewind/kysely-store`. Every call holds
 * the connection's one permit (`exclusive`). A write is one `BEGIN IMMEDIATE` transaction through
 * Kysely (the dialect's), so it already excludes every other writer and needs no row locks; a read
 * runs inside a plain (deferred) `BEGIN`, which under WAL is one snapshot: an operation and its
 * steps agree even while another process writes. Either is retried while another process holds the
 * lock (`retryBusy`), like the session store's calls.
 */
import { StoreError } from "@rewind/contracts"
import type { OperationJournalBackend, OperationJournalTables } from "@rewind/kysely-store"
import type Database from "better-sqlite3"
import { Effect } from "effect"
import type { Kysely } from "kysely"
import type { SqliteConnection } from "./connection.js"
import { Busy, isBusy, retryBusy } from "./sqliteErrors.js"

export const makeJournalBackend = (connection: SqliteConnection): OperationJournalBackend => {
  const { db, exclusive, storeError, settings } = connection
  const kysely = connection.kysely as unknown as Kysely<OperationJournalTables>
  // Prepared once: a read's snapshot costs two statements that Kysely need not compile.
  let snapshot: { readonly begin: Database.Statement; readonly end: Database.Statement } | undefined

  const attempt = <A>(operation: string, run: () => Promise<A>) =>
    retryBusy(
      exclusive(
        Effect.tryPromise({
          try: run,
          // A StoreError the body throws (a refusal) is the call's failure as it is.
          catch: (error): StoreError | Busy =>
            error instanceof StoreError
              ? error
              : isBusy(error)
                ? new Busy({ operation, cause: error })
                : storeError(operation)(error),
        }),
      ),
      settings.busyTimeoutMillis,
    )

  return {
    kysely,
    rowLocks: false,
    writeTransaction: (operation, body) => attempt(operation, () => kysely.transaction().execute(body)),
    read: (operation, body) =>
      attempt(operation, async () => {
        snapshot ??= { begin: db.prepare("begin"), end: db.prepare("commit") }
        // The permit is held, so no other call's statement runs on the connection meanwhile.
        snapshot.begin.run()
        try {
          return await body(kysely)
        } finally {
          if (db.inTransaction) snapshot.end.run()
        }
      }),
  }
}
