// The shared SessionStore conformance suite, run against the PostgreSQL adapter: one schema per
// test, and a "reopen" is a new connection pool on that schema.
import type { EncodedEvent, SessionId } from "@rewind/contracts"
import { storeConformance } from "@rewind/testkit"
import { Effect } from "effect"
import { PostgresSessionStore } from "../src/index.js"
import { describePg, rawQuery, storeOptions, tempSchema } from "./pgTest.js"

describePg("PostgreSQL session store", () => {
  storeConformance("postgres", () =>
    Effect.map(tempSchema, (schema) => ({
      layer: PostgresSessionStore.layer(storeOptions(schema)),
      // Written behind the adapter's back, as a newer Rewind sharing the database would.
      appendEncoded: (sessionId: SessionId, event: EncodedEvent, at: number) =>
        Effect.promise(async () => {
          const { rows } = await rawQuery<{ version: number }>(
            schema,
            "select version from streams where session_id = $1",
            [sessionId],
          )
          const version = rows[0]!.version
          await rawQuery(
            schema,
            `with moved as (update streams set version = $2::integer + 1, updated_at = $6 where session_id = $1)
             insert into events (session_id, sequence, type, version, payload, at) values ($1, $2::integer + 1, $3, $4, $5, $6)`,
            [sessionId, version, event.type, event.version, JSON.stringify(event.payload), at],
          )
        }),
    })),
  )
})
