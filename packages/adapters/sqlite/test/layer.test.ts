// The layers: `layerConfig` reads its options from Effect's Config, and the connection lives exactly
// as long as the layer's scope.
import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { SessionStore } from "@rewind/core"
import { StoreEvents } from "@rewind/testkit"
import { ConfigProvider, Effect } from "effect"
import { SqliteSessionStore } from "../src/index.js"
import { tempDir } from "./tempStore.js"

const { sessionCreated, sessionIdOf } = StoreEvents

const withEnv = (entries: ReadonlyArray<readonly [string, string]>) =>
  Effect.withConfigProvider(ConfigProvider.fromMap(new Map(entries)))

describe("SqliteSessionStore.layerConfig", () => {
  it.scoped("reads REWIND_SQLITE_PATH, _BUSY_TIMEOUT_MS and _SYNCHRONOUS", () =>
    Effect.gen(function* () {
      const file = path.join(yield* tempDir, "configured.db")
      const settings = yield* Effect.provide(
        Effect.map(SqliteSessionStore.SqliteStore, (store) => ({
          location: store.location,
          settings: store.settings,
        })),
        SqliteSessionStore.layerConfig(),
      ).pipe(
        withEnv([
          ["REWIND_SQLITE_PATH", file],
          ["REWIND_SQLITE_BUSY_TIMEOUT_MS", "2500"],
          ["REWIND_SQLITE_SYNCHRONOUS", "FULL"],
        ]),
      )
      expect(settings).toEqual({
        location: file,
        settings: { journalMode: "wal", synchronous: "FULL", busyTimeoutMillis: 2500, foreignKeys: true },
      })
      expect(fs.existsSync(file)).toBe(true)
    }),
  )

  it.effect("fails with a StoreError naming the missing variable", () =>
    Effect.gen(function* () {
      const error = yield* Effect.flip(
        Effect.provide(SessionStore, SqliteSessionStore.layerConfig()).pipe(withEnv([])),
      )
      expect(error).toMatchObject({ _tag: "StoreError", operation: "config" })
      expect(error.message).toMatch(/REWIND_SQLITE_PATH/)
    }),
  )

  it.effect("refuses a synchronous mode it does not offer", () =>
    Effect.gen(function* () {
      const error = yield* Effect.flip(
        Effect.provide(SessionStore, SqliteSessionStore.layerConfig()).pipe(
          withEnv([
            ["REWIND_SQLITE_PATH", ":memory:"],
            ["REWIND_SQLITE_SYNCHRONOUS", "OFF"],
          ]),
        ),
      )
      expect(error).toMatchObject({ _tag: "StoreError", operation: "config" })
    }),
  )
})

describe("SqliteSessionStore.layer", () => {
  it.scoped("closes its connection with its scope: the file is released and reopens cleanly", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir
      const file = path.join(dir, "scoped.db")
      const id = sessionIdOf("scoped")
      yield* Effect.provide(
        Effect.flatMap(SessionStore, (s) =>
          s.append({ sessionId: id, expectedVersion: 0, events: [sessionCreated(id)], at: 1 }),
        ),
        SqliteSessionStore.layer({ path: file }),
      )
      // The last connection to a WAL database checkpoints and removes its -wal and -shm files on close.
      expect(fs.readdirSync(dir)).toEqual(["scoped.db"])
      const version = yield* Effect.provide(
        Effect.flatMap(SessionStore, (s) => s.version(id)),
        SqliteSessionStore.layer({ path: file }),
      )
      expect(version).toBe(1)
    }),
  )
})
