// Backup and restore as docs/storage-postgres.md describes them: `pg_dump` of the store's schema
// (custom format) restored with `pg_restore` into another database gives a store that reads back
// the same sessions, facts and blobs, passes its integrity check and takes new appends.
import { execFile } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { promisify } from "node:util"
import { expect, it } from "@effect/vitest"
import { ArtifactStore, SessionStore } from "@rewind/core"
import { StoreEvents } from "@rewind/testkit"
import { Effect, Option } from "effect"
import { layerPostgres, PostgresSessionStore } from "../src/index.js"
import {
  adminPool,
  describePg,
  freshSchemaName,
  pgAvailable,
  pgUrl,
  storeOptions,
  tempSchema,
} from "./pgTest.js"

const run = promisify(execFile)
const { sessionCreated, sessionIdOf, textPart, userMessage } = StoreEvents

/** pg_dump and pg_restore, from PATH or Debian's server directories. */
const findTool = (name: string): string | undefined => {
  const dirs = [
    ...(process.env.PATH ?? "").split(path.delimiter),
    ...(fs.existsSync("/usr/lib/postgresql")
      ? fs
          .readdirSync("/usr/lib/postgresql")
          .sort((a, b) => Number(b) - Number(a))
          .map((v) => `/usr/lib/postgresql/${v}/bin`)
      : []),
  ]
  return dirs.map((d) => path.join(d, name)).find((p) => fs.existsSync(p))
}
const pgDump = findTool("pg_dump")
const pgRestore = findTool("pg_restore")
const toolsFound = pgDump !== undefined && pgRestore !== undefined
if (pgAvailable && !toolsFound) console.warn("backup test: pg_dump/pg_restore not found, so it is skipped")

const urlOf = (database: string) => {
  const url = new URL(pgUrl)
  url.pathname = `/${database}`
  return url.toString()
}

describePg("backing up a PostgreSQL store with pg_dump", () => {
  it.scoped.skipIf(!toolsFound)(
    "pg_dump of the schema, pg_restore into another database: the same store",
    () =>
      Effect.gen(function* () {
        const schema = yield* tempSchema
        const a = sessionIdOf("a")
        const written = yield* Effect.provide(
          Effect.gen(function* () {
            const store = yield* SessionStore
            const blobs = yield* ArtifactStore
            yield* store.append({
              sessionId: a,
              expectedVersion: 0,
              events: [sessionCreated(a), userMessage(a, 1)],
              at: 1,
            })
            yield* store.commit({
              appends: [
                {
                  sessionId: a,
                  expectedVersion: 2,
                  events: [textPart(1, 1, "nul \u0000 and \uD800 kept")],
                  at: 2,
                },
              ],
              facts: [{ sessionId: a, commandId: "cmd-1", result: { ok: true }, at: 2 }],
            })
            const hash = yield* blobs.put(new TextEncoder().encode("checkpoint content"))
            return { events: yield* store.read(a), list: yield* store.listSessions(), hash }
          }),
          layerPostgres(storeOptions(schema)),
        )

        const dir = yield* Effect.acquireRelease(
          Effect.sync(() => fs.mkdtempSync(path.join(os.tmpdir(), "rewind-pg-backup-"))),
          (d) => Effect.sync(() => fs.rmSync(d, { recursive: true, force: true })),
        )
        const file = path.join(dir, "store.dump")
        yield* Effect.promise(() =>
          run(pgDump!, ["--format=custom", `--schema=${schema}`, `--file=${file}`, pgUrl]),
        )

        const database = freshSchemaName()
        yield* Effect.acquireRelease(
          Effect.promise(() => adminPool().query(`create database "${database}"`)),
          () => Effect.promise(() => adminPool().query(`drop database if exists "${database}" with (force)`)),
        )
        yield* Effect.promise(() =>
          run(pgRestore!, ["--exit-on-error", "--no-owner", `--dbname=${urlOf(database)}`, file]),
        )

        const restored = yield* Effect.provide(
          Effect.gen(function* () {
            const store = yield* SessionStore
            const blobs = yield* ArtifactStore
            const events = yield* store.read(a)
            const list = yield* store.listSessions()
            const fact = yield* store.getCommandFact(a, "cmd-1")
            const blob = new TextDecoder().decode(yield* blobs.get(written.hash))
            const integrity = yield* PostgresSessionStore.integrityCheck
            // The identity and the version carry on where they were.
            const next = yield* store.append({
              sessionId: a,
              expectedVersion: 3,
              events: [textPart(1, 2, "after")],
              at: 3,
            })
            return { events, list, fact, blob, integrity, next }
          }),
          layerPostgres({ ...storeOptions(schema), connectionString: urlOf(database) }),
        )
        expect(restored.events).toEqual(written.events)
        expect(restored.list).toEqual(written.list)
        expect(Option.getOrThrow(restored.fact).result).toEqual({ ok: true })
        expect(restored.blob).toBe("checkpoint content")
        expect(restored.integrity).toEqual({ ok: true, problems: [] })
        expect(restored.next).toEqual({ version: 4 })
      }),
  )
})
