// Two OS processes append to one stream of one store file at the same time. Nothing may be lost,
// duplicated or corrupted: the file passes SQLite's integrity check and the stream holds every
// event of both writers, numbered 1..N without a gap, each writer's events in its own order.
import * as path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { SessionStore } from "@rewind/core"
import { StoreEvents } from "@rewind/testkit"
import { Effect } from "effect"
import { SqliteSessionStore } from "../src/index.js"
import { fixture, runNode } from "./childProcess.js"
import { tempDir, withRawDatabase } from "./tempStore.js"

const { sessionIdOf } = StoreEvents

const PER_WORKER = 2_000
const WORKERS = ["left", "right"] as const

describe("two processes writing one store", () => {
  it.scoped(`lose nothing and corrupt nothing (${WORKERS.length} × ${PER_WORKER} appends)`, () =>
    Effect.gen(function* () {
      const file = path.join(yield* tempDir, "shared.db")
      const stream = sessionIdOf("shared")
      // Both open the brand-new file at once: the first open (and migration) races too.
      const runs = yield* Effect.all(
        WORKERS.map((worker) =>
          runNode(fixture("appendWorker.mjs"), [
            file,
            stream,
            worker,
            String(PER_WORKER),
            ...WORKERS.filter((w) => w !== worker),
          ]),
        ),
        { concurrency: "unbounded" },
      )
      for (const run of runs) {
        expect(run.stderr).toBe("")
        expect(run.code).toBe(0)
        expect(JSON.parse(run.stdout)).toMatchObject({ appended: PER_WORKER })
      }

      const total = PER_WORKER * WORKERS.length
      withRawDatabase(file, (db) => {
        expect(db.pragma("integrity_check", { simple: true })).toBe("ok")
        expect(db.pragma("foreign_key_check")).toEqual([])
        expect(db.prepare("select version from streams where session_id = ?").pluck().get(stream)).toBe(total)
        expect(db.prepare("select count(*) from kysely_migration").pluck().get()).toBe(5)
      })

      const events = yield* Effect.provide(
        Effect.flatMap(SessionStore, (s) => s.read(stream)),
        SqliteSessionStore.layer({ path: file }),
      )
      expect(events.length).toBe(total)
      const seen = new Map<string, Array<number>>(WORKERS.map((w) => [w, []]))
      let contiguous = true
      events.forEach((stored, i) => {
        if (stored.sequence !== i + 1) contiguous = false
        if (stored.event._tag !== "PartAppended") throw new Error(`unexpected ${stored.event._tag}`)
        const [worker, n] = (stored.event.part.text ?? "").split(":")
        seen.get(worker!)?.push(Number(n))
      })
      expect(contiguous).toBe(true)
      const inOrder = Array.from({ length: PER_WORKER }, (_, i) => i)
      for (const worker of WORKERS) expect(seen.get(worker)).toEqual(inOrder)
    }),
  )
})
