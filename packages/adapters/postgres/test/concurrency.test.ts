// Writers racing on one PostgreSQL store through separate pools (as workers on separate machines
// would): the races the schema and the locks decide. Outcomes are checked, never timings.
import { expect, it } from "@effect/vitest"
import type { SessionId, StoredEvent } from "@rewind/contracts"
import { SessionStore, type SessionStoreService } from "@rewind/core"
import { StoreEvents } from "@rewind/testkit"
import { Context, Effect, Layer } from "effect"
import { PostgresSessionStore } from "../src/index.js"
import { describePg, storeOptions, tempSchema } from "./pgTest.js"

const { sessionCreated, sessionIdOf, textPart } = StoreEvents

/** `n` independent stores (each its own pool) on one schema, closed with the test's scope. */
const openStores = (schema: string, n: number) =>
  Effect.forEach(
    Array.from({ length: n }, (_, i) => i),
    () =>
      Effect.map(Layer.build(PostgresSessionStore.layer(storeOptions(schema, { poolSize: 3 }))), (context) =>
        Context.get(context, SessionStore),
      ),
    { concurrency: "unbounded" },
  )

/** Appends one event at the stream's current version, again and again until it lands. */
const appendUntilLanded = (store: SessionStoreService, id: SessionId, text: string, at: number) =>
  Effect.gen(function* () {
    let conflicts = 0
    for (;;) {
      const expectedVersion = yield* store.version(id)
      const outcome = yield* Effect.either(
        store.append({ sessionId: id, expectedVersion, events: [textPart(0, at, text)], at }),
      )
      if (outcome._tag === "Right") return conflicts
      if (outcome.left._tag !== "VersionConflict") return yield* Effect.fail(outcome.left)
      conflicts++
    }
  })

describePg("concurrent writers on one PostgreSQL store", () => {
  it.scoped("appenders through four pools lose nothing: one gapless stream holding every event once", () =>
    Effect.gen(function* () {
      const schema = yield* tempSchema
      const stores = yield* openStores(schema, 4)
      const id = sessionIdOf("shared")
      yield* stores[0]!.append({ sessionId: id, expectedVersion: 0, events: [sessionCreated(id)], at: 0 })
      const perWriter = 40
      yield* Effect.all(
        stores.map((store, w) =>
          Effect.forEach(
            Array.from({ length: perWriter }, (_, i) => i),
            (i) => appendUntilLanded(store, id, `${w}:${i}`, i + 1),
            { discard: true },
          ),
        ),
        { concurrency: "unbounded" },
      )
      const events = yield* stores[1]!.read(id)
      expect(events.length).toBe(1 + stores.length * perWriter)
      expect(events.map((e) => e.sequence)).toEqual(events.map((_, i) => i + 1))
      const byWriter = new Map<string, Array<number>>()
      for (const { event } of events.slice(1)) {
        if (event._tag !== "PartAppended") throw new Error(`unexpected ${event._tag}`)
        const [w, i] = (event.part.text ?? "").split(":")
        byWriter.set(w!, [...(byWriter.get(w!) ?? []), Number(i)])
      }
      for (let w = 0; w < stores.length; w++) {
        expect(byWriter.get(String(w))).toEqual(Array.from({ length: perWriter }, (_, i) => i))
      }
    }),
  )

  it.scoped("creators racing on one new stream: exactly one wins, the others get a VersionConflict", () =>
    Effect.gen(function* () {
      const schema = yield* tempSchema
      const stores = yield* openStores(schema, 4)
      for (let round = 0; round < 5; round++) {
        const id = sessionIdOf(`new-${round}`)
        const outcomes = yield* Effect.all(
          stores.map((store, w) =>
            Effect.either(
              store.append({
                sessionId: id,
                expectedVersion: 0,
                events: [sessionCreated(id, { title: `by ${w}` }), textPart(0, w, `writer ${w}`)],
                at: round,
              }),
            ),
          ),
          { concurrency: "unbounded" },
        )
        const winners = outcomes.filter((o) => o._tag === "Right")
        expect(winners.length).toBe(1)
        for (const o of outcomes) {
          if (o._tag === "Left") {
            expect(o.left).toMatchObject({
              _tag: "VersionConflict",
              sessionId: id,
              expectedVersion: 0,
              actualVersion: 2,
            })
          }
        }
        const events = yield* stores[0]!.read(id)
        expect(events.map((e) => e.sequence)).toEqual([1, 2])
      }
      expect((yield* stores[2]!.listSessions()).length).toBe(5)
    }),
  )

  it.scoped(
    "the same command racing through four pools is recorded once; every loser gets the winner's result",
    () =>
      Effect.gen(function* () {
        const schema = yield* tempSchema
        const stores = yield* openStores(schema, 4)
        const parent = sessionIdOf("parent")
        yield* stores[0]!.append({
          sessionId: parent,
          expectedVersion: 0,
          events: [sessionCreated(parent)],
          at: 0,
        })
        for (let round = 0; round < 5; round++) {
          const commandId = `fork-${round}`
          const outcomes = yield* Effect.all(
            stores.map((store, w) => {
              const child = sessionIdOf(`child-${round}-${w}`)
              return Effect.either(
                store.commit({
                  appends: [
                    {
                      sessionId: child,
                      expectedVersion: 0,
                      events: [sessionCreated(child, { kind: "fork", parentId: parent })],
                      at: round,
                    },
                  ],
                  facts: [{ sessionId: parent, commandId, result: { child }, at: round }],
                }),
              )
            }),
            { concurrency: "unbounded" },
          )
          const won = outcomes.flatMap((o, w) => (o._tag === "Right" ? [w] : []))
          expect(won.length).toBe(1)
          const winner = sessionIdOf(`child-${round}-${won[0]}`)
          for (const o of outcomes) {
            if (o._tag === "Left") {
              expect(o.left).toMatchObject({
                _tag: "CommandAlreadyRecorded",
                commandId,
                result: { child: winner },
              })
            }
          }
          // The losers' children were never written.
          for (let w = 0; w < stores.length; w++) {
            expect(yield* stores[3]!.version(sessionIdOf(`child-${round}-${w}`))).toBe(w === won[0] ? 1 : 0)
          }
        }
      }),
  )

  it.scoped("commits naming the same streams in opposite orders never deadlock into a failure", () =>
    Effect.gen(function* () {
      const schema = yield* tempSchema
      const stores = yield* openStores(schema, 2)
      const x = sessionIdOf("x")
      const y = sessionIdOf("y")
      yield* stores[0]!.commit({
        appends: [
          { sessionId: x, expectedVersion: 0, events: [sessionCreated(x)], at: 0 },
          { sessionId: y, expectedVersion: 0, events: [sessionCreated(y)], at: 0 },
        ],
      })
      const rounds = 30
      const landed = yield* Effect.all(
        stores.map((store, w) =>
          Effect.gen(function* () {
            let done = 0
            while (done < rounds) {
              const [vx, vy] = [yield* store.version(x), yield* store.version(y)]
              const appends = [
                { sessionId: x, expectedVersion: vx, events: [textPart(0, done, `${w}`)], at: 1 },
                { sessionId: y, expectedVersion: vy, events: [textPart(0, done, `${w}`)], at: 1 },
              ]
              const outcome = yield* Effect.either(
                store.commit({ appends: w === 0 ? appends : appends.reverse() }),
              )
              if (outcome._tag === "Right") done++
              else if (outcome.left._tag !== "VersionConflict") return yield* Effect.fail(outcome.left)
            }
            return done
          }),
        ),
        { concurrency: "unbounded" },
      )
      expect(landed).toEqual([rounds, rounds])
      expect(yield* stores[0]!.version(x)).toBe(1 + 2 * rounds)
      expect(yield* stores[1]!.version(y)).toBe(1 + 2 * rounds)
      // Each commit wrote both streams at the same step: their texts agree position by position.
      const texts = (events: ReadonlyArray<StoredEvent>) =>
        events.slice(1).map((e) => (e.event._tag === "PartAppended" ? e.event.part.text : ""))
      expect(texts(yield* stores[0]!.read(x))).toEqual(texts(yield* stores[0]!.read(y)))
    }),
  )
})
