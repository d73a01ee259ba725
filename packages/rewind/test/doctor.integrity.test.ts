// Issue 22 item 5: doctor checks the database through the StoreIntegrity port, whichever adapter
// provides it, and names no adapter itself. A store without the port (the in-memory one) has no
// database section; one with it has its findings, its failure and its read-only state reported.
import { describe, expect, it } from "@effect/vitest"
import { MemoryArtifactStore, MemorySessionStore } from "@rewind/adapter-memory"
import { StoreError } from "@rewind/contracts"
import { StoreIntegrity, type StoreIntegrityService } from "@rewind/core"
import { Effect, Layer } from "effect"
import { runDoctor } from "../src/internal/doctor.js"

const memory = Layer.merge(MemorySessionStore.layer, MemoryArtifactStore.layer)

const withPort = (port: Partial<StoreIntegrityService>) =>
  Layer.merge(
    memory,
    Layer.succeed(StoreIntegrity, {
      kind: "postgresql",
      location: "postgres://db/rewind#rewind",
      schemaVersion: 3,
      check: Effect.succeed({ ok: true, problems: [] }),
      readOnly: Effect.succeed(undefined),
      ...port,
    }),
  )

describe("doctor over the StoreIntegrity port", () => {
  it.effect("without the port there is no database section, and nothing is reported about one", () =>
    Effect.gen(function* () {
      const report = yield* runDoctor()
      expect(report.database).toBeUndefined()
      expect(report.schemaVersion).toBeUndefined()
      expect(report.ok).toBe(true)
    }).pipe(Effect.provide(memory)),
  )

  it.effect("a healthy store is reported with its kind and schema version", () =>
    Effect.gen(function* () {
      const report = yield* runDoctor()
      expect(report.database).toEqual({ kind: "postgresql", ok: true, problems: [] })
      expect(report.schemaVersion).toBe(3)
      expect(report.ok).toBe(true)
    }).pipe(Effect.provide(withPort({}))),
  )

  it.effect("each finding of the port's check is a database_integrity problem", () =>
    Effect.gen(function* () {
      const problems = ["stream s1: streams.version 4 but the last event is 3", "stream s2: a gap"]
      const report = yield* runDoctor().pipe(
        Effect.provide(withPort({ check: Effect.succeed({ ok: false, problems }) })),
      )
      expect(report.ok).toBe(false)
      expect(report.database).toEqual({ kind: "postgresql", ok: false, problems })
      expect(report.problems.filter((p) => p.kind === "database_integrity").map((p) => p.message)).toEqual(
        problems,
      )
    }),
  )

  it.effect("a check that cannot run is a finding, not a crash", () =>
    Effect.gen(function* () {
      const failing = Effect.fail(new StoreError({ operation: "integrityCheck", message: "server gone" }))
      const report = yield* runDoctor().pipe(Effect.provide(withPort({ check: failing })))
      expect(report.database?.ok).toBe(false)
      expect(report.problems).toMatchObject([{ kind: "database_integrity", message: "server gone" }])
    }),
  )

  it.effect("a store this process cannot write is reported at its location", () =>
    Effect.gen(function* () {
      const report = yield* runDoctor().pipe(
        Effect.provide(withPort({ readOnly: Effect.succeed("the server is a hot standby") })),
      )
      expect(report.problems).toMatchObject([
        {
          kind: "store_read_only",
          subject: "postgres://db/rewind#rewind",
          message: "the server is a hot standby",
        },
      ])
    }),
  )
})
