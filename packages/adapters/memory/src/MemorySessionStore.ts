/**
 * An in-memory SessionStore. Events are kept in their encoded (JSON) form and decoded on read,
 * exactly as a database adapter would, so anything that would not survive a real store fails here
 * too. `MemoryStoreData` can outlive one layer, which is how tests "reopen" a memory store.
 */
import {
  CommandAlreadyRecorded,
  decodeOwnedEventSync,
  type EncodedEvent,
  EventDecodeError,
  encodeEvent,
  type SessionId,
  type StoredEvent,
  StoreError,
  VersionConflict,
} from "@rewind/contracts"
import {
  type AppendRequest,
  type CommandFact,
  SessionStore,
  type SessionStoreService,
  type SessionSummary,
} from "@rewind/core"
import { Effect, Layer, Option } from "effect"

interface Row {
  readonly sequence: number
  readonly at: number
  readonly json: string
}

/** The backing data of a memory store; share it between layers to simulate a reopen. */
export interface MemoryStoreData {
  readonly streams: Map<SessionId, Array<Row>>
  readonly sessions: Map<SessionId, Omit<SessionSummary, "version" | "updatedAt">>
  readonly facts: Map<string, { readonly json: string; readonly at: number }>
}

export const makeMemoryStoreData = (): MemoryStoreData => ({
  streams: new Map(),
  sessions: new Map(),
  facts: new Map(),
})

const factKey = (sessionId: string, commandId: string) => `${sessionId}\u0000${commandId}`

export const makeMemorySessionStore = (
  data: MemoryStoreData = makeMemoryStoreData(),
): SessionStoreService => {
  const versionOf = (sessionId: SessionId) => data.streams.get(sessionId)?.length ?? 0

  // Everything is validated and encoded before the first write, so a failure leaves nothing behind.
  const prepare = (request: AppendRequest) =>
    Effect.gen(function* () {
      const actual = versionOf(request.sessionId)
      if (actual !== request.expectedVersion) {
        return yield* new VersionConflict({
          sessionId: request.sessionId,
          expectedVersion: request.expectedVersion,
          actualVersion: actual,
        })
      }
      const rows = yield* Effect.try({
        try: () =>
          request.events.map((event, i) => ({
            sequence: actual + i + 1,
            at: request.at,
            json: JSON.stringify(encodeEvent(event)),
            event,
          })),
        catch: (cause) =>
          new StoreError({ operation: "append", message: `could not encode event: ${String(cause)}`, cause }),
      })
      return { request, rows }
    })

  const write = (prepared: Effect.Effect.Success<ReturnType<typeof prepare>>) => {
    const { request, rows } = prepared
    let stream = data.streams.get(request.sessionId)
    if (stream === undefined) {
      stream = []
      data.streams.set(request.sessionId, stream)
    }
    for (const row of rows) {
      stream.push({ sequence: row.sequence, at: row.at, json: row.json })
      if (row.event._tag === "SessionCreated") {
        const s = row.event.session
        data.sessions.set(request.sessionId, {
          sessionId: s.id,
          kind: s.kind,
          parentId: s.parentId,
          title: s.title,
          createdAt: s.createdAt,
        })
      }
    }
    return stream.length
  }

  const service: SessionStoreService = {
    append: (request) => Effect.map(prepare(request), (prepared) => ({ version: write(prepared) })),

    commit: (request) =>
      Effect.gen(function* () {
        const seen = new Set<SessionId>()
        for (const a of request.appends) {
          if (seen.has(a.sessionId)) {
            return yield* new StoreError({
              operation: "commit",
              message: `session ${a.sessionId} appears twice in one commit`,
            })
          }
          seen.add(a.sessionId)
        }
        const prepared = []
        for (const a of request.appends) prepared.push(yield* prepare(a))
        const facts = request.facts ?? []
        for (const f of facts) {
          const existing = data.facts.get(factKey(f.sessionId, f.commandId))
          if (existing !== undefined) {
            return yield* new CommandAlreadyRecorded({
              sessionId: f.sessionId,
              commandId: f.commandId,
              result: JSON.parse(existing.json),
            })
          }
        }
        const encodedFacts = yield* Effect.try({
          try: () => facts.map((f) => ({ f, json: JSON.stringify(f.result ?? null) })),
          catch: (cause) =>
            new StoreError({ operation: "commit", message: "command fact result is not JSON", cause }),
        })
        for (const p of prepared) write(p)
        for (const { f, json } of encodedFacts)
          data.facts.set(factKey(f.sessionId, f.commandId), { json, at: f.at })
      }),

    // One synchronous loop rather than an effect per event: long streams are read on every load.
    read: (sessionId, options) =>
      Effect.try({
        try: () => {
          const after = options?.afterSequence ?? 0
          const rows = data.streams.get(sessionId) ?? []
          const out: Array<StoredEvent> = []
          for (let i = after; i < rows.length; i++) {
            const row = rows[i]!
            const encoded = JSON.parse(row.json) as EncodedEvent
            out.push({ sessionId, sequence: row.sequence, at: row.at, event: decodeOwnedEventSync(encoded) })
          }
          return out
        },
        catch: (cause) =>
          cause instanceof EventDecodeError
            ? cause
            : new StoreError({
                operation: "read",
                message: `could not read session ${sessionId}: ${String(cause)}`,
                cause,
              }),
      }),

    version: (sessionId) => Effect.sync(() => versionOf(sessionId)),

    listSessions: () =>
      Effect.sync(() =>
        [...data.sessions.values()].map((s) => {
          const rows = data.streams.get(s.sessionId) ?? []
          return { ...s, version: rows.length, updatedAt: rows.at(-1)?.at ?? s.createdAt }
        }),
      ),

    getCommandFact: (sessionId, commandId) =>
      Effect.sync(() => {
        const fact = data.facts.get(factKey(sessionId, commandId))
        return fact === undefined
          ? Option.none<CommandFact>()
          : Option.some<CommandFact>({ sessionId, commandId, result: JSON.parse(fact.json), at: fact.at })
      }),
  }
  return service
}

/** A fresh, empty memory store. */
export const layer: Layer.Layer<SessionStore> = Layer.sync(SessionStore, () => makeMemorySessionStore())

/** A memory store over existing data (a "reopen" of a store that outlived its layer). */
export const layerFrom = (data: MemoryStoreData): Layer.Layer<SessionStore> =>
  Layer.sync(SessionStore, () => makeMemorySessionStore(data))
