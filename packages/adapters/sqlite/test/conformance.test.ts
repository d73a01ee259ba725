// The shared SessionStore conformance suite, run against the SQLite adapter: one file per test,
// and a "reopen" is a new connection to that file.
import type { EncodedEvent, SessionId } from "@rewind/contracts"
import { storeConformance } from "@rewind/testkit"
import { Effect } from "effect"
import { SqliteSessionStore } from "../src/index.js"
import { tempStorePath, withRawDatabase } from "./tempStore.js"

storeConformance("sqlite", () =>
  Effect.map(tempStorePath, (file) => ({
    layer: SqliteSessionStore.layer({ path: file }),
    // Written behind the adapter's back, as a newer Rewind sharing the file would.
    appendEncoded: (sessionId: SessionId, event: EncodedEvent, at: number) =>
      Effect.sync(() =>
        withRawDatabase(file, (db) =>
          db.transaction(() => {
            const version = db
              .prepare("select version from streams where session_id = ?")
              .pluck()
              .get(sessionId) as number
            db.prepare(
              "insert into events (session_id, sequence, type, version, payload, at) values (?, ?, ?, ?, ?, ?)",
            ).run(sessionId, version + 1, event.type, event.version, JSON.stringify(event.payload), at)
            db.prepare("update streams set version = ?, updated_at = ? where session_id = ?").run(
              version + 1,
              at,
              sessionId,
            )
          })(),
        ),
      ),
  })),
)
