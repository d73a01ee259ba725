// What the validation suite does not check: values stored once per (channel, version), several
// workers on one store, concurrent writes of a superstep, deleteThread's append-only meaning (the
// records stay, Rewind's GC collects what only the deleted thread held and keeps what live threads
// hold), compression, scopes, and clear errors for bad input. Runs under vitest 4 (this package's
// runner, for the validation suite), so it uses plain async tests over Effect.runPromise instead of
// @effect/vitest, which is bound to the repo's vitest 3.
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { type Checkpoint, emptyCheckpoint, TASKS, uuid6 } from "@langchain/langgraph-checkpoint"
import { ArtifactStore, cleanup, SessionStore } from "@rewind/core"
import { Effect, ManagedRuntime } from "effect"
import { afterAll, describe, expect, it } from "vitest"
import {
  GraphConfigInvalid,
  layerSqlite,
  openSqliteSaver,
  RewindCheckpointSaver,
  saverOnRuntime,
} from "../src/index.js"

const dir = mkdtempSync(join(tmpdir(), "rewind-langgraph-saver-"))
afterAll(() => rmSync(dir, { recursive: true, force: true }))
let files = 0
const freshPath = () => join(dir, `store-${files++}.db`)

/** A saver and a runtime over the same store, to look behind the saver's back. */
const openWithRuntime = (options: { scope?: string; compress?: boolean } = {}) => {
  const runtime = ManagedRuntime.make(layerSqlite({ path: freshPath() }))
  return { runtime, saver: saverOnRuntime(runtime, options) }
}

const checkpointWith = (values: Record<string, unknown>, versions: Record<string, number>): Checkpoint => ({
  ...emptyCheckpoint(),
  id: uuid6(-1),
  channel_values: values,
  channel_versions: versions,
})

const meta = { source: "loop" as const, step: 0, parents: {} }

describe("RewindCheckpointSaver", () => {
  it("stores a channel value once per (channel, version) and rebuilds every checkpoint's values", async () => {
    const { runtime, saver } = openWithRuntime()
    try {
      const big = (n: number) => `${"x".repeat(2000)}${n}`
      const values: Record<string, unknown> = {}
      const versions: Record<string, number> = {}
      for (let c = 0; c < 10; c++) {
        values[`ch${c}`] = big(c)
        versions[`ch${c}`] = 1
      }
      let config = await saver.put(
        { configurable: { thread_id: "t1" } },
        checkpointWith(values, versions),
        meta,
        versions,
      )
      const before = await runtime.runPromise(Effect.flatMap(ArtifactStore, (a) => a.stats()))
      // Ten steps, one channel changing in each: one new blob per step.
      for (let step = 1; step <= 10; step++) {
        values.ch3 = big(100 + step)
        versions.ch3 = step + 1
        config = await saver.put(config, checkpointWith({ ...values }, { ...versions }), meta, {
          ch3: step + 1,
        })
      }
      const after = await runtime.runPromise(Effect.flatMap(ArtifactStore, (a) => a.stats()))
      // Each step adds the changed value and the (small, distinct) checkpoint header at most.
      expect(after.count - before.count).toBeLessThanOrEqual(20)
      expect(after.count - before.count).toBeGreaterThanOrEqual(10)
      const latest = await saver.getTuple({ configurable: { thread_id: "t1" } })
      expect(latest?.checkpoint.channel_values).toEqual(values)
      const all = []
      for await (const tuple of saver.list({ configurable: { thread_id: "t1" } })) all.push(tuple)
      expect(all).toHaveLength(11)
      // The first checkpoint still reads its own version of ch3.
      expect(all.at(-1)?.checkpoint.channel_values.ch3).toBe(big(3))
    } finally {
      await saver.close()
    }
  })

  it("lets two workers on one store see each other's checkpoints and retries their conflicts", async () => {
    const path = freshPath()
    const a = await openSqliteSaver({ path, scope: "shared" })
    const b = await openSqliteSaver({ path, scope: "shared" })
    try {
      const first = await a.put({ configurable: { thread_id: "w" } }, checkpointWith({}, {}), meta, {})
      expect((await b.getTuple({ configurable: { thread_id: "w" } }))?.config).toEqual(first)
      // Both append to the same stream at once: one of them conflicts and retries.
      const [fromA, fromB] = await Promise.all([
        a.put(first, checkpointWith({ n: 1 }, { n: 1 }), meta, { n: 1 }),
        b.put(first, checkpointWith({ m: 2 }, { m: 1 }), meta, { m: 1 }),
      ])
      const ids = []
      for await (const tuple of a.list({ configurable: { thread_id: "w" } })) ids.push(tuple.checkpoint.id)
      expect(ids.sort()).toEqual(
        [first, fromA, fromB].map((c) => c.configurable?.checkpoint_id as string).sort(),
      )
      // A worker that never saw the thread finds it when listing every thread of the scope.
      const c = await openSqliteSaver({ path, scope: "shared" })
      const threads = new Set<string>()
      for await (const tuple of c.list({ configurable: {} }))
        threads.add(tuple.config.configurable?.thread_id)
      expect([...threads]).toEqual(["w"])
      await c.close()
    } finally {
      await a.close()
      await b.close()
    }
  })

  it("records a superstep's concurrent writes, keeping the first of a regular write and the last of a special one", async () => {
    const { saver } = openWithRuntime()
    try {
      const config = await saver.put({ configurable: { thread_id: "p" } }, checkpointWith({}, {}), meta, {})
      await Promise.all(
        Array.from({ length: 8 }, (_, i) =>
          saver.putWrites(config, [["out", i]], `task-${i}`, `path-${7 - i}`),
        ),
      )
      await saver.putWrites(config, [["out", "again"]], "task-0", "path-7")
      await saver.putWrites(config, [["__error__", "first"]], "task-0", "path-7")
      await saver.putWrites(config, [["__error__", "second"]], "task-0", "path-7")
      const tuple = await saver.getTuple(config)
      const writes = tuple?.pendingWrites ?? []
      // Ordered by (task path, task id, index): task-7 has path-0.
      expect(writes.filter(([, channel]) => channel === "out").map(([task]) => task)).toEqual(
        Array.from({ length: 8 }, (_, i) => `task-${7 - i}`),
      )
      expect(writes.find(([task, channel]) => task === "task-0" && channel === "out")?.[2]).toBe(0)
      expect(writes.filter(([, channel]) => channel === "__error__")).toEqual([
        ["task-0", "__error__", "second"],
      ])
    } finally {
      await saver.close()
    }
  })

  it("deleteThread appends a tombstone: the thread reads empty, GC collects only what it alone held", async () => {
    const { runtime, saver } = openWithRuntime({ scope: "gc" })
    try {
      const large = (tag: string) => `${tag}:${"payload ".repeat(400)}`
      const put = (thread: string) =>
        saver.put(
          { configurable: { thread_id: thread } },
          checkpointWith({ doc: large(thread) }, { doc: 1 }),
          meta,
          { doc: 1 },
        )
      const gone = await put("gone")
      await saver.putWrites(gone, [["doc", large("pending")]], "task")
      await put("kept")
      const blobCount = () =>
        runtime.runPromise(Effect.flatMap(ArtifactStore, (a) => a.stats())).then((s) => s.count)
      // Wait until the store's clock has passed the puts, so a grace window of 0 makes them old.
      const waitPastPuts = () =>
        runtime.runPromise(
          Effect.gen(function* () {
            const artifacts = yield* ArtifactStore
            const start = yield* artifacts.now()
            while ((yield* artifacts.now()) <= start) yield* Effect.sleep("2 millis")
          }),
        )
      await waitPastPuts()
      const live = await blobCount()
      const first = await runtime.runPromise(cleanup({ graceMs: 0 }))
      expect(first.swept).toBe(true)
      expect(first.deleted).toEqual([])
      expect(await blobCount()).toBe(live)
      expect((await saver.getTuple(gone))?.checkpoint.channel_values).toEqual({ doc: large("gone") })

      await saver.deleteThread("gone")
      expect(await saver.getTuple(gone)).toBeUndefined()
      expect(await saver.getTuple({ configurable: { thread_id: "gone" } })).toBeUndefined()
      // Append-only: the stream still holds the records, and a tombstone after them.
      const events = await runtime.runPromise(
        Effect.flatMap(SessionStore, (s) => s.read(saver.sessionIdOf("gone"))),
      )
      expect(events.map((e) => e.event._tag)).toEqual([
        "SessionCreated",
        "GraphCheckpointRecorded",
        "GraphWritesRecorded",
        "GraphThreadDeleted",
      ])
      await waitPastPuts()
      const second = await runtime.runPromise(cleanup({ graceMs: 0 }))
      expect(second.swept).toBe(true)
      expect(second.deleted.length).toBeGreaterThanOrEqual(2)
      expect(await blobCount()).toBe(live - second.deleted.length)
      expect(
        (await saver.getTuple({ configurable: { thread_id: "kept" } }))?.checkpoint.channel_values,
      ).toEqual({
        doc: large("kept"),
      })
      // The thread can start again after it was deleted.
      await put("gone")
      expect(
        (await saver.getTuple({ configurable: { thread_id: "gone" } }))?.checkpoint.channel_values,
      ).toEqual({
        doc: large("gone"),
      })
    } finally {
      await saver.close()
    }
  })

  it("compresses blobs when asked, and reads them back either way", async () => {
    const text = "the same line again\n".repeat(500)
    const sizes: Array<number> = []
    for (const compress of [false, true]) {
      const { runtime, saver } = openWithRuntime({ compress })
      try {
        const config = await saver.put(
          { configurable: { thread_id: "z" } },
          checkpointWith({ text }, { text: 1 }),
          meta,
          { text: 1 },
        )
        expect((await saver.getTuple(config))?.checkpoint.channel_values).toEqual({ text })
        const hashes = await runtime.runPromise(
          Effect.flatMap(SessionStore, (s) => s.read(saver.sessionIdOf("z"))).pipe(
            Effect.map((events) =>
              events.flatMap((e) =>
                e.event._tag === "GraphCheckpointRecorded"
                  ? e.event.channels.flatMap((c) =>
                      c.value !== undefined && "hash" in c.value ? [c.value.hash] : [],
                    )
                  : [],
              ),
            ),
          ),
        )
        const [blob] = await runtime.runPromise(Effect.flatMap(ArtifactStore, (a) => a.getMany(hashes)))
        sizes.push(blob!.length)
      } finally {
        await saver.close()
      }
    }
    expect(sizes[1]!).toBeLessThan(sizes[0]! / 4)
  })

  it("keeps scopes apart and migrates pending sends of old checkpoints", async () => {
    const path = freshPath()
    const one = await openSqliteSaver({ path, scope: "one" })
    const two = await openSqliteSaver({ path, scope: "two" })
    try {
      const c0 = await one.put(
        { configurable: { thread_id: "same" } },
        { ...checkpointWith({}, {}), v: 1 },
        meta,
        {},
      )
      await one.putWrites(c0, [[TASKS, "send-1"]], "task-1")
      const c1 = await one.put(c0, { ...checkpointWith({}, {}), v: 1 }, meta, {})
      expect(await two.getTuple({ configurable: { thread_id: "same" } })).toBeUndefined()
      expect((await one.getTuple(c1))?.checkpoint.channel_values).toEqual({ [TASKS]: ["send-1"] })
      expect(one.sessionIdOf("same")).not.toBe(two.sessionIdOf("same"))
    } finally {
      await one.close()
      await two.close()
    }
  })

  it("refuses bad input with a typed error and stores nothing", async () => {
    const { runtime, saver } = openWithRuntime()
    try {
      await expect(saver.put({}, checkpointWith({}, {}), meta, {})).rejects.toBeInstanceOf(GraphConfigInvalid)
      await expect(
        saver.put({ configurable: { thread_id: "" } }, checkpointWith({}, {}), meta, {}),
      ).rejects.toThrow(/thread_id is missing/)
      await expect(saver.putWrites({ configurable: { thread_id: "x" } }, [["a", 1]], "t")).rejects.toThrow(
        /checkpoint_id is missing/,
      )
      await expect(saver.deleteThread("")).rejects.toBeInstanceOf(GraphConfigInvalid)
      expect(
        () =>
          new RewindCheckpointSaver({ run: runtime.runPromise, dispose: async () => {} }, { scope: "a/b" }),
      ).toThrow(/scope/)
      const sessions = await runtime.runPromise(Effect.flatMap(SessionStore, (s) => s.listSessions()))
      expect(sessions).toEqual([])
      expect(saver.getNextVersion(undefined)).toBe(1)
      expect(saver.getNextVersion(41)).toBe(42)
    } finally {
      await saver.close()
    }
    await expect(saver.getTuple({ configurable: { thread_id: "x" } })).rejects.toThrow(/closed/)
  })
})
