/**
 * The SessionStore conformance suite: one set of tests every adapter runs against itself, so that
 * "works on the memory store" means "works on every store". Call `storeConformance` at the top
 * level of a test file with a factory that makes a fresh, isolated store per test.
 *
 * A store under test is "reopenable": every build of its layer is a cold open of the same backing
 * data (a new connection, a new service), which is how the suite checks that what was written
 * comes back exactly. Decisions the suite pins down for every adapter:
 * - sessions are listed in the order their streams were created;
 * - text is kept exactly, including lone surrogates (`"\uD800"`), NUL and BOM characters;
 * - an event written by a newer Rewind (unknown type or version) fails the read, it is never guessed.
 */
import { describe, expect, it } from "@effect/vitest"
import {
  type EncodedEvent,
  encodeEvent,
  type MessageId,
  type SessionEvent,
  type SessionId,
  type StoredEvent,
} from "@rewind/contracts"
import {
  type AppendRequest,
  appendReply,
  appendUserMessage,
  applyCompaction,
  BackgroundTasks,
  type CommandFact,
  completeTurn,
  createSession,
  IdGenerators,
  loadSession,
  projectSession,
  rewindConversation,
  SessionStore,
  type SessionStoreService,
} from "@rewind/core"
import { Effect, FastCheck as fc, Layer, Option, type Scope } from "effect"
import { sessionCreated, sessionIdOf, textPart, turnStarted, userMessage } from "./storeEvents.js"

export interface ConformanceStore {
  /** Opens the store under test; every build of this layer is a cold open of the same data. */
  readonly layer: Layer.Layer<SessionStore, unknown>
  /**
   * Stores an already-encoded event as it is, at the next sequence of its stream, bypassing the
   * codec: how the suite simulates a store written by a newer Rewind.
   */
  readonly appendEncoded: (
    sessionId: SessionId,
    event: EncodedEvent,
    at: number,
  ) => Effect.Effect<void, unknown>
}

export interface StoreConformanceOptions {
  /** Events in the long-stream test (default 10,000). */
  readonly longStreamEvents?: number
  /** Characters of the large part text (default 5 MiB). */
  readonly largeTextChars?: number
  /** Runs of the random-operations property (default 25). */
  readonly propertyRuns?: number
}

const DEFAULT_SEED = 20_240_607

/** The fast-check seed: `REWIND_CONFORMANCE_SEED` when set, so a failing run can be replayed. */
export const conformanceSeed = (): number => {
  const raw = process.env.REWIND_CONFORMANCE_SEED
  const parsed = raw === undefined ? Number.NaN : Number.parseInt(raw, 10)
  return Number.isSafeInteger(parsed) ? parsed : DEFAULT_SEED
}

const withStore = <A, E>(body: (store: SessionStoreService) => Effect.Effect<A, E>) =>
  Effect.flatMap(SessionStore, body)

/** Runs `body` against a fresh (cold) open of the store. */
const opened = <A, E>(
  store: ConformanceStore,
  body: (s: SessionStoreService) => Effect.Effect<A, E>,
): Effect.Effect<A, unknown> => Effect.provide(withStore(body), store.layer)

const eventsOf = (stored: ReadonlyArray<StoredEvent>) => stored.map((e) => e.event)
const sequencesOf = (stored: ReadonlyArray<StoredEvent>) => stored.map((e) => e.sequence)

const append = (
  sessionId: SessionId,
  expectedVersion: number,
  events: ReadonlyArray<SessionEvent>,
  at = 0,
) => ({
  sessionId,
  expectedVersion,
  events,
  at,
})

// No task ever runs in these scenarios; conversation rewinds only need the port to answer.
const idleBackgroundTasks = Layer.succeed(BackgroundTasks, {
  stop: () => Effect.void,
  setGeneration: () => Effect.void,
})

/** Deterministic text of exactly `chars` UTF-16 units, with line numbers so truncation shows. */
const largeText = (chars: number): string => {
  const lines: Array<string> = []
  let length = 0
  for (let i = 0; length < chars; i++) {
    const line = `${i.toString(36)} ünïcødé ✓ — the quick brown fox jumps over the lazy dog\n`
    lines.push(line)
    length += line.length
  }
  return lines.join("").slice(0, chars)
}

const UNICODE_SAMPLES = [
  "family 👩‍👩‍👧‍👦 and flags 🇯🇵🇫🇷",
  "مرحبا بالعالم — שלום עולם",
  "override \u202Eevil\u202C and isolate \u2067x\u2069",
  "combining e\u0301 vs \u00e9",
  "nul\u0000inside",
  "bom \uFEFF and nbsp\u00a0",
  "lone high \uD83D then text",
  "lone low \uDE00 then text",
  "reversed pair \uDE00\uD83D",
  "trailing high \uD800",
  "\uDC00",
  "漢字かなカナ한국어",
]

export const storeConformance = (
  name: string,
  makeStore: () => Effect.Effect<ConformanceStore, unknown, Scope.Scope>,
  options: StoreConformanceOptions = {},
): void => {
  const longStreamEvents = options.longStreamEvents ?? 10_000
  const largeTextChars = options.largeTextChars ?? 5 * 1024 * 1024
  const propertyRuns = options.propertyRuns ?? 25
  const seed = conformanceSeed()

  describe(`SessionStore conformance: ${name}`, () => {
    it.scoped("appends and reads back each stream in order, with sequences and times", () =>
      Effect.gen(function* () {
        const store = yield* makeStore()
        const a = sessionIdOf("conf-a")
        const b = sessionIdOf("conf-b")
        const aEvents = [sessionCreated(a), userMessage(a, 1), turnStarted(1), textPart(1, 1, "one")]
        const bEvents = [sessionCreated(b), userMessage(b, 1)]
        yield* opened(store, (s) =>
          Effect.gen(function* () {
            expect(yield* s.append(append(a, 0, aEvents.slice(0, 2), 10))).toEqual({ version: 2 })
            expect(yield* s.append(append(b, 0, bEvents, 11))).toEqual({ version: 2 })
            expect(yield* s.append(append(a, 2, aEvents.slice(2), 12))).toEqual({ version: 4 })

            const readA = yield* s.read(a)
            expect(sequencesOf(readA)).toEqual([1, 2, 3, 4])
            expect(readA.map((e) => e.at)).toEqual([10, 10, 12, 12])
            expect(readA.every((e) => e.sessionId === a)).toBe(true)
            expect(eventsOf(readA)).toEqual(aEvents)
            const readB = yield* s.read(b)
            expect(sequencesOf(readB)).toEqual([1, 2])
            expect(eventsOf(readB)).toEqual(bEvents)

            expect(yield* s.version(a)).toBe(4)
            expect(yield* s.version(b)).toBe(2)
            expect(yield* s.version(sessionIdOf("conf-nobody"))).toBe(0)
            expect(yield* s.read(sessionIdOf("conf-nobody"))).toEqual([])
          }),
        )
      }),
    )

    it.scoped("reads after a sequence return only the tail", () =>
      Effect.gen(function* () {
        const store = yield* makeStore()
        const a = sessionIdOf("conf-tail")
        const events = [sessionCreated(a), ...[1, 2, 3, 4, 5].map((n) => textPart(0, n, `part ${n}`))]
        yield* opened(store, (s) =>
          Effect.gen(function* () {
            yield* s.append(append(a, 0, events))
            expect(sequencesOf(yield* s.read(a, { afterSequence: 0 }))).toEqual([1, 2, 3, 4, 5, 6])
            const tail = yield* s.read(a, { afterSequence: 4 })
            expect(sequencesOf(tail)).toEqual([5, 6])
            expect(eventsOf(tail)).toEqual(events.slice(4))
            expect(yield* s.read(a, { afterSequence: 6 })).toEqual([])
            expect(yield* s.read(a, { afterSequence: 60 })).toEqual([])
          }),
        )
      }),
    )

    it.scoped(
      "an append whose expected version is stale or ahead fails with VersionConflict and writes nothing",
      () =>
        Effect.gen(function* () {
          const store = yield* makeStore()
          const a = sessionIdOf("conf-conflict")
          yield* opened(store, (s) =>
            Effect.gen(function* () {
              const ahead = yield* Effect.flip(s.append(append(a, 1, [sessionCreated(a)])))
              expect(ahead).toMatchObject({
                _tag: "VersionConflict",
                sessionId: a,
                expectedVersion: 1,
                actualVersion: 0,
              })
              expect(yield* s.version(a)).toBe(0)

              yield* s.append(append(a, 0, [sessionCreated(a), userMessage(a, 1)]))
              // Two writers decided on version 0; the second one must not land.
              const stale = yield* Effect.flip(s.append(append(a, 0, [sessionCreated(a)])))
              expect(stale).toMatchObject({ _tag: "VersionConflict", expectedVersion: 0, actualVersion: 2 })
              const skipped = yield* Effect.flip(s.append(append(a, 3, [textPart(1, 1, "x")])))
              expect(skipped).toMatchObject({ _tag: "VersionConflict", expectedVersion: 3, actualVersion: 2 })

              expect(sequencesOf(yield* s.read(a))).toEqual([1, 2])
              expect(yield* s.version(a)).toBe(2)
            }),
          )
          // The refused appends left nothing behind on disk either.
          expect(yield* opened(store, (s) => s.version(a))).toBe(2)
        }),
    )

    it.scoped("an empty append checks the version and writes nothing", () =>
      Effect.gen(function* () {
        const store = yield* makeStore()
        const a = sessionIdOf("conf-empty")
        yield* opened(store, (s) =>
          Effect.gen(function* () {
            expect(yield* s.append(append(a, 0, []))).toEqual({ version: 0 })
            expect(yield* s.read(a)).toEqual([])
            expect(yield* s.listSessions()).toEqual([])
            const conflict = yield* Effect.flip(s.append(append(a, 5, [])))
            expect(conflict).toMatchObject({ _tag: "VersionConflict", expectedVersion: 5, actualVersion: 0 })
            yield* s.append(append(a, 0, [sessionCreated(a)]))
            expect(yield* s.append(append(a, 1, []))).toEqual({ version: 1 })
          }),
        )
      }),
    )

    it.scoped("a commit writes several streams and its command facts together", () =>
      Effect.gen(function* () {
        const store = yield* makeStore()
        const parent = sessionIdOf("conf-parent")
        const child = sessionIdOf("conf-child")
        const childEvents = [sessionCreated(child, { kind: "fork", parentId: parent }), userMessage(child, 1)]
        yield* opened(store, (s) =>
          Effect.gen(function* () {
            yield* s.append(append(parent, 0, [sessionCreated(parent), userMessage(parent, 1)], 5))
            yield* s.commit({
              appends: [append(child, 0, childEvents, 7), append(parent, 2, [textPart(1, 1, "forked")], 7)],
              facts: [
                { sessionId: parent, commandId: "fork-1", result: { childId: child, copied: [1, 2] }, at: 7 },
              ],
            })
            expect(eventsOf(yield* s.read(child))).toEqual(childEvents)
            expect(sequencesOf(yield* s.read(parent))).toEqual([1, 2, 3])
            const fact = yield* s.getCommandFact(parent, "fork-1")
            expect(Option.getOrThrow(fact)).toEqual({
              sessionId: parent,
              commandId: "fork-1",
              result: { childId: child, copied: [1, 2] },
              at: 7,
            })
          }),
        )
      }),
    )

    it.scoped("a version conflict on the last stream of a commit leaves nothing visible in any stream", () =>
      Effect.gen(function* () {
        const store = yield* makeStore()
        const x = sessionIdOf("conf-x")
        const y = sessionIdOf("conf-y")
        const z = sessionIdOf("conf-z")
        const fresh = sessionIdOf("conf-fresh")
        const before = yield* opened(store, (s) =>
          Effect.gen(function* () {
            yield* s.append(append(x, 0, [sessionCreated(x), userMessage(x, 1)]))
            yield* s.append(append(y, 0, [sessionCreated(y)]))
            yield* s.append(append(z, 0, [sessionCreated(z)]))
            return {
              x: yield* s.read(x),
              y: yield* s.read(y),
              z: yield* s.read(z),
              list: yield* s.listSessions(),
            }
          }),
        )
        const check = (s: SessionStoreService) =>
          Effect.gen(function* () {
            expect(yield* s.read(x)).toEqual(before.x)
            expect(yield* s.read(y)).toEqual(before.y)
            expect(yield* s.read(z)).toEqual(before.z)
            expect(yield* s.read(fresh)).toEqual([])
            expect(yield* s.version(fresh)).toBe(0)
            expect(yield* s.listSessions()).toEqual(before.list)
            expect(yield* s.getCommandFact(x, "cmd-atomic")).toEqual(Option.none())
          })
        yield* opened(store, (s) =>
          Effect.gen(function* () {
            const error = yield* Effect.flip(
              s.commit({
                appends: [
                  append(x, 2, [textPart(1, 1, "would be lost")]),
                  append(fresh, 0, [sessionCreated(fresh)]),
                  append(y, 1, [textPart(1, 2, "also")]),
                  append(z, 0, [sessionCreated(z)]),
                ],
                facts: [{ sessionId: x, commandId: "cmd-atomic", result: "done", at: 1 }],
              }),
            )
            expect(error).toMatchObject({
              _tag: "VersionConflict",
              sessionId: z,
              expectedVersion: 0,
              actualVersion: 1,
            })
            yield* check(s)
          }),
        )
        yield* opened(store, check)
      }),
    )

    it.scoped("a command fact recorded before fails the whole commit and returns the stored result", () =>
      Effect.gen(function* () {
        const store = yield* makeStore()
        const x = sessionIdOf("conf-fx")
        const fresh = sessionIdOf("conf-fx-child")
        yield* opened(store, (s) =>
          Effect.gen(function* () {
            yield* s.append(append(x, 0, [sessionCreated(x)]))
            yield* s.commit({
              appends: [],
              facts: [{ sessionId: x, commandId: "fork-a", result: { child: "c1" }, at: 3 }],
            })
            const error = yield* Effect.flip(
              s.commit({
                appends: [append(x, 1, [userMessage(x, 1)]), append(fresh, 0, [sessionCreated(fresh)])],
                facts: [
                  { sessionId: x, commandId: "fork-b", result: { child: "c2" }, at: 4 },
                  { sessionId: x, commandId: "fork-a", result: { child: "c3" }, at: 4 },
                ],
              }),
            )
            expect(error).toMatchObject({
              _tag: "CommandAlreadyRecorded",
              sessionId: x,
              commandId: "fork-a",
              result: { child: "c1" },
            })
            expect(yield* s.version(x)).toBe(1)
            expect(yield* s.version(fresh)).toBe(0)
            expect(yield* s.getCommandFact(x, "fork-b")).toEqual(Option.none())
            expect(Option.getOrThrow(yield* s.getCommandFact(x, "fork-a")).result).toEqual({ child: "c1" })
          }),
        )
      }),
    )

    it.scoped("a session named twice in one commit is refused with a StoreError", () =>
      Effect.gen(function* () {
        const store = yield* makeStore()
        const x = sessionIdOf("conf-twice")
        yield* opened(store, (s) =>
          Effect.gen(function* () {
            const error = yield* Effect.flip(
              s.commit({ appends: [append(x, 0, [sessionCreated(x)]), append(x, 1, [userMessage(x, 1)])] }),
            )
            expect(error._tag).toBe("StoreError")
            expect(yield* s.version(x)).toBe(0)
          }),
        )
      }),
    )

    it.scoped("command facts are keyed by session and command, written once, and survive a reopen", () =>
      Effect.gen(function* () {
        const store = yield* makeStore()
        const a = sessionIdOf("conf-facts-a")
        const b = sessionIdOf("conf-facts-b")
        const resultA = { n: 1, list: [1, "two", null, { deep: true }], text: "✓ \uD800" }
        yield* opened(store, (s) =>
          Effect.gen(function* () {
            expect(yield* s.getCommandFact(a, "cmd")).toEqual(Option.none())
            yield* s.commit({
              appends: [],
              facts: [
                { sessionId: a, commandId: "cmd", result: resultA, at: 10 },
                { sessionId: b, commandId: "cmd", result: "other session", at: 11 },
              ],
            })
            const replay = yield* Effect.flip(
              s.commit({
                appends: [],
                facts: [{ sessionId: a, commandId: "cmd", result: { n: 2 }, at: 12 }],
              }),
            )
            expect(replay).toMatchObject({ _tag: "CommandAlreadyRecorded", result: resultA })
          }),
        )
        const facts = yield* opened(store, (s) =>
          Effect.all([s.getCommandFact(a, "cmd"), s.getCommandFact(b, "cmd"), s.getCommandFact(a, "other")]),
        )
        expect(facts.map(Option.getOrUndefined)).toEqual([
          { sessionId: a, commandId: "cmd", result: resultA, at: 10 } satisfies CommandFact,
          { sessionId: b, commandId: "cmd", result: "other session", at: 11 } satisfies CommandFact,
          undefined,
        ])
      }),
    )

    it.scoped(
      "lists sessions in creation order with kind, lineage, title, version and last append time",
      () =>
        Effect.gen(function* () {
          const store = yield* makeStore()
          const main = sessionIdOf("conf-list-main")
          const fork = sessionIdOf("conf-list-fork")
          const sub = sessionIdOf("conf-list-sub")
          const bare = sessionIdOf("conf-list-bare")
          const listed = yield* opened(store, (s) =>
            Effect.gen(function* () {
              yield* s.append(append(main, 0, [sessionCreated(main, { title: "Main ✓", at: 100 })], 100))
              yield* s.append(
                append(
                  fork,
                  0,
                  [sessionCreated(fork, { kind: "fork", parentId: main, title: "Fork of Main ✓", at: 200 })],
                  200,
                ),
              )
              // A stream without a SessionCreated event is not a session.
              yield* s.append(append(bare, 0, [userMessage(bare, 1)], 250))
              yield* s.append(append(main, 1, [userMessage(main, 1), turnStarted(1)], 300))
              yield* s.append(
                append(
                  sub,
                  0,
                  [sessionCreated(sub, { kind: "subagent", parentId: fork, title: "helper", at: 400 })],
                  400,
                ),
              )
              return yield* s.listSessions()
            }),
          )
          expect(listed).toEqual([
            {
              sessionId: main,
              kind: "main",
              parentId: undefined,
              title: "Main ✓",
              createdAt: 100,
              version: 3,
              updatedAt: 300,
            },
            {
              sessionId: fork,
              kind: "fork",
              parentId: main,
              title: "Fork of Main ✓",
              createdAt: 200,
              version: 1,
              updatedAt: 200,
            },
            {
              sessionId: sub,
              kind: "subagent",
              parentId: fork,
              title: "helper",
              createdAt: 400,
              version: 1,
              updatedAt: 400,
            },
          ])
          expect(yield* opened(store, (s) => s.listSessions())).toEqual(listed)
        }),
    )

    it.scoped("a cold reopen yields exactly the state that was held in memory", () =>
      Effect.gen(function* () {
        const store = yield* makeStore()
        const env = Layer.mergeAll(store.layer, IdGenerators.layerSequential("conf"), idleBackgroundTasks)
        const written = yield* Effect.provide(
          Effect.gen(function* () {
            const session = yield* createSession({ title: "cold ✓ \uD83D", cwd: "/work" })
            const turns: Array<{ user: MessageId; assistant: MessageId }> = []
            for (const text of ["first", "second 👋", "third"]) {
              const user = yield* appendUserMessage(session.id, { text })
              const reply = yield* appendReply(session.id, {
                turnId: user.turnId,
                parts: [
                  { kind: "reasoning", text: `thinking about ${text}` },
                  {
                    kind: "tool_call",
                    toolName: "Edit",
                    data: { path: "a.ts", edits: [{ old: "x", new: "y" }] },
                  },
                  { kind: "text", text: `re: ${text}` },
                ],
              })
              yield* completeTurn(session.id, user.turnId)
              turns.push({ user: user.messageId, assistant: reply.messageId })
            }
            yield* applyCompaction(session.id, {
              fromMessageId: turns[0]!.user,
              toMessageId: turns[0]!.assistant,
              summaryText: "the first turn, summarised",
            })
            const rewound = yield* rewindConversation({ sessionId: session.id, messageId: turns[2]!.user })
            const store = yield* SessionStore
            const child = sessionIdOf("conf-cold-child")
            const childEvents = [
              sessionCreated(child, { kind: "fork", parentId: session.id }),
              userMessage(child, 1),
            ]
            yield* store.commit({
              appends: [append(child, 0, childEvents, 9)],
              facts: [{ sessionId: session.id, commandId: "fork-cold", result: { childId: child }, at: 9 }],
            })
            return {
              sessionId: session.id,
              child,
              // The state a host holds after its last command: folded in memory, never re-read.
              state: rewound.state,
              childState: projectSession(
                childEvents.map((event, i) => ({ sessionId: child, sequence: i + 1, at: 9, event })),
              ),
              events: yield* store.read(session.id),
              list: yield* store.listSessions(),
              fact: yield* store.getCommandFact(session.id, "fork-cold"),
            }
          }),
          env,
        )
        expect(written.state.version).toBe(written.events.length)
        yield* Effect.provide(
          Effect.gen(function* () {
            const store = yield* SessionStore
            expect(yield* loadSession(written.sessionId)).toEqual(written.state)
            expect(yield* loadSession(written.child)).toEqual(written.childState)
            expect(yield* store.read(written.sessionId)).toEqual(written.events)
            expect(yield* store.listSessions()).toEqual(written.list)
            expect(yield* store.getCommandFact(written.sessionId, "fork-cold")).toEqual(written.fact)
          }),
          store.layer,
        )
      }),
    )

    it.scoped("keeps text exactly: emoji, right-to-left, combining marks, NUL, BOM and lone surrogates", () =>
      Effect.gen(function* () {
        const store = yield* makeStore()
        const id = sessionIdOf("conf-unicode")
        const title = "标题 \uD800 «title» 🚀"
        const events = [
          sessionCreated(id, { title }),
          userMessage(id, 1),
          ...UNICODE_SAMPLES.map((text, i) => textPart(1, i, text)),
        ]
        const result = { samples: UNICODE_SAMPLES, "key 🔑 \uDBFF": "value" }
        const texts = (stored: ReadonlyArray<StoredEvent>) =>
          stored.flatMap((e) => (e.event._tag === "PartAppended" ? [e.event.part.text] : []))
        const warm = yield* opened(store, (s) =>
          Effect.gen(function* () {
            yield* s.append(append(id, 0, events))
            yield* s.commit({ appends: [], facts: [{ sessionId: id, commandId: "unicode", result, at: 1 }] })
            return yield* s.read(id)
          }),
        )
        expect(texts(warm)).toEqual(UNICODE_SAMPLES)
        const cold = yield* opened(store, (s) =>
          Effect.all({
            events: s.read(id),
            list: s.listSessions(),
            fact: s.getCommandFact(id, "unicode"),
          }),
        )
        const coldTexts = texts(cold.events)
        for (let i = 0; i < UNICODE_SAMPLES.length; i++) {
          // Compared unit by unit: a replaced lone surrogate (U+FFFD) must not pass as equal.
          expect([...(coldTexts[i] ?? "")].map((c) => c.charCodeAt(0))).toEqual(
            [...UNICODE_SAMPLES[i]!].map((c) => c.charCodeAt(0)),
          )
        }
        expect(eventsOf(cold.events)).toEqual(events)
        expect(cold.list[0]?.title).toBe(title)
        expect(Option.getOrThrow(cold.fact).result).toEqual(result)
      }),
    )

    it.scoped("keeps a 5 MB part text whole across a cold reopen", () =>
      Effect.gen(function* () {
        const store = yield* makeStore()
        const id = sessionIdOf("conf-large")
        const big = largeText(largeTextChars)
        yield* opened(store, (s) =>
          s.append(
            append(id, 0, [
              sessionCreated(id),
              userMessage(id, 1),
              textPart(1, 1, big),
              textPart(1, 2, "after"),
            ]),
          ),
        )
        const cold = yield* opened(store, (s) => s.read(id))
        const part = cold[2]?.event
        expect(part?._tag).toBe("PartAppended")
        const text = part?._tag === "PartAppended" ? (part.part.text ?? "") : ""
        expect(text.length).toBe(big.length)
        // One boolean instead of a 5 MB diff when it fails.
        expect(text === big).toBe(true)
        expect(sequencesOf(cold)).toEqual([1, 2, 3, 4])
      }),
    )

    it.scoped(`reads a ${longStreamEvents.toLocaleString("en")}-event stream back whole and in order`, () =>
      Effect.gen(function* () {
        const store = yield* makeStore()
        const id = sessionIdOf("conf-long")
        const events: Array<SessionEvent> = [sessionCreated(id)]
        for (let n = 1; n < longStreamEvents; n++) events.push(textPart(0, n, `part ${n}`))
        const batch = 500
        yield* opened(store, (s) =>
          Effect.gen(function* () {
            for (let start = 0; start < events.length; start += batch) {
              const result = yield* s.append(
                append(id, start, events.slice(start, start + batch), start / batch),
              )
              expect(result.version).toBe(Math.min(start + batch, events.length))
            }
          }),
        )
        const cold = yield* opened(store, (s) =>
          Effect.all([s.read(id), s.read(id, { afterSequence: longStreamEvents - 10 }), s.version(id)]),
        )
        const [all, tail, version] = cold
        expect(version).toBe(longStreamEvents)
        expect(all.length).toBe(longStreamEvents)
        let inOrder = true
        for (let i = 0; i < all.length; i++) {
          if (all[i]!.sequence !== i + 1 || all[i]!.at !== Math.floor(i / batch)) inOrder = false
        }
        expect(inOrder).toBe(true)
        expect(eventsOf(all)).toEqual(events)
        expect(sequencesOf(tail)).toEqual(Array.from({ length: 10 }, (_, i) => longStreamEvents - 9 + i))
      }),
    )

    it.scoped(
      "refuses to read events of an unknown type or a newer version (EventDecodeError), before and after a reopen",
      () =>
        Effect.gen(function* () {
          const store = yield* makeStore()
          const newer = sessionIdOf("conf-newer")
          const unknown = sessionIdOf("conf-unknown")
          const malformed = sessionIdOf("conf-malformed")
          const part = encodeEvent(textPart(0, 1, "from the future"))
          yield* opened(store, (s) =>
            Effect.all([
              s.append(append(newer, 0, [sessionCreated(newer)])),
              s.append(append(unknown, 0, [sessionCreated(unknown)])),
              s.append(append(malformed, 0, [sessionCreated(malformed)])),
            ]),
          )
          yield* store.appendEncoded(newer, { ...part, version: 99 }, 5)
          yield* store.appendEncoded(
            unknown,
            { type: "HologramProjected", version: 1, payload: { beam: 1 } },
            5,
          )
          yield* store.appendEncoded(
            malformed,
            { type: "PartAppended", version: 1, payload: { part: 42 } },
            5,
          )
          for (const _attempt of ["warm", "cold"]) {
            yield* opened(store, (s) =>
              Effect.gen(function* () {
                expect(yield* Effect.flip(s.read(newer))).toMatchObject({
                  _tag: "EventDecodeError",
                  reason: "unsupported_version",
                  type: "PartAppended",
                  version: 99,
                })
                expect(yield* Effect.flip(s.read(unknown))).toMatchObject({
                  _tag: "EventDecodeError",
                  reason: "unknown_type",
                })
                expect(yield* Effect.flip(s.read(malformed))).toMatchObject({
                  _tag: "EventDecodeError",
                  reason: "malformed",
                })
                // The stream still counts the event: nobody can append over it by mistake.
                expect(yield* s.version(newer)).toBe(2)
                expect(sequencesOf(yield* s.read(newer, { afterSequence: 2 }))).toEqual([])
              }),
            )
          }
        }),
    )

    it.scoped.prop(
      `random appends and commits agree with a reference model (seed ${seed})`,
      [operationsArbitrary],
      ([operations]) =>
        Effect.gen(function* () {
          const store = yield* makeStore()
          const model = newModel()
          yield* opened(store, (s) =>
            Effect.forEach(operations, (op) => applyOperation(s, model, op), { discard: true }),
          )
          yield* opened(store, (s) => checkModel(s, model))
        }),
      { fastCheck: { seed, numRuns: propertyRuns } },
    )
  })
}

// ---------------------------------------------------------------------------------------------
// The random-operations property: a reference model of streams and facts, and the operations.

const STREAMS = [sessionIdOf("prop-0"), sessionIdOf("prop-1"), sessionIdOf("prop-2")] as const

interface Model {
  readonly streams: Map<SessionId, Array<{ readonly event: SessionEvent; readonly at: number }>>
  readonly facts: Map<string, { readonly result: unknown; readonly at: number }>
  /** Streams in the order they were created: the order `listSessions` must keep. */
  readonly created: Array<SessionId>
  nextPart: number
}

const newModel = (): Model => ({
  streams: new Map(STREAMS.map((id) => [id, []])),
  facts: new Map(),
  created: [],
  nextPart: 0,
})

const record = (model: Model, id: SessionId, events: ReadonlyArray<SessionEvent>, at: number) => {
  const stream = model.streams.get(id)!
  if (stream.length === 0 && events.length > 0) model.created.push(id)
  stream.push(...events.map((event) => ({ event, at })))
}

const versionIn = (model: Model, id: SessionId) => model.streams.get(id)!.length

type Operation =
  | {
      readonly kind: "append"
      readonly stream: number
      readonly texts: ReadonlyArray<string>
      readonly stale: boolean
    }
  | {
      readonly kind: "commit"
      readonly parts: ReadonlyArray<{ readonly stream: number; readonly texts: ReadonlyArray<string> }>
      readonly staleAt: number | undefined
      readonly fact: string | undefined
    }
  | { readonly kind: "read"; readonly stream: number; readonly after: number }

// Any UTF-16 unit, lone surrogates and NUL included.
const textArbitrary = fc
  .array(fc.integer({ min: 0, max: 0xffff }), { maxLength: 12 })
  .map((units) => String.fromCharCode(...units))
const streamArbitrary = fc.integer({ min: 0, max: STREAMS.length - 1 })
const textsArbitrary = fc.array(textArbitrary, { maxLength: 4 })

const operationArbitrary: fc.Arbitrary<Operation> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.record({
      kind: fc.constant("append" as const),
      stream: streamArbitrary,
      texts: textsArbitrary,
      stale: fc.boolean(),
    }),
  },
  {
    weight: 3,
    arbitrary: fc
      .record({
        streams: fc.uniqueArray(streamArbitrary, { minLength: 1, maxLength: STREAMS.length }),
        texts: fc.array(textsArbitrary, { minLength: STREAMS.length, maxLength: STREAMS.length }),
        staleAt: fc.option(fc.nat({ max: STREAMS.length - 1 }), { nil: undefined }),
        fact: fc.option(fc.constantFrom("cmd-0", "cmd-1", "cmd-2"), { nil: undefined }),
      })
      .map(({ streams, texts, staleAt, fact }) => ({
        kind: "commit" as const,
        parts: streams.map((stream, i) => ({ stream, texts: texts[i]! })),
        staleAt: staleAt === undefined || staleAt >= streams.length ? undefined : staleAt,
        fact,
      })),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant("read" as const),
      stream: streamArbitrary,
      after: fc.nat({ max: 12 }),
    }),
  },
)

const operationsArbitrary = fc.array(operationArbitrary, { minLength: 1, maxLength: 25 })

/** New events for a stream: its SessionCreated first, then text parts numbered across the run. */
const eventsFor = (model: Model, id: SessionId, texts: ReadonlyArray<string>): Array<SessionEvent> => {
  const events: Array<SessionEvent> = versionIn(model, id) === 0 ? [sessionCreated(id)] : []
  for (const text of texts) events.push(textPart(0, model.nextPart++, text))
  return events
}

const wrongVersion = (actual: number) => (actual === 0 ? 1 : actual - 1)

const applyOperation = (s: SessionStoreService, model: Model, op: Operation) =>
  Effect.gen(function* () {
    const at = model.nextPart
    switch (op.kind) {
      case "append": {
        const id = STREAMS[op.stream]!
        const actual = versionIn(model, id)
        const events = eventsFor(model, id, op.texts)
        if (op.stale) {
          const error = yield* Effect.flip(s.append(append(id, wrongVersion(actual), events, at)))
          expect(error).toMatchObject({ _tag: "VersionConflict", actualVersion: actual })
          return
        }
        expect(yield* s.append(append(id, actual, events, at))).toEqual({ version: actual + events.length })
        record(model, id, events, at)
        return
      }
      case "commit": {
        const appends: Array<AppendRequest> = op.parts.map(({ stream, texts }, i) => {
          const id = STREAMS[stream]!
          const actual = versionIn(model, id)
          return append(id, i === op.staleAt ? wrongVersion(actual) : actual, eventsFor(model, id, texts), at)
        })
        const factSession = STREAMS[op.parts[0]!.stream]!
        const facts =
          op.fact === undefined ? [] : [{ sessionId: factSession, commandId: op.fact, result: { at }, at }]
        const outcome = yield* Effect.either(s.commit({ appends, facts }))
        const recorded = op.fact === undefined ? undefined : model.facts.get(`${factSession}/${op.fact}`)
        if (op.staleAt !== undefined) {
          expect(outcome._tag === "Left" && outcome.left).toMatchObject({
            _tag: "VersionConflict",
            sessionId: appends[op.staleAt]!.sessionId,
          })
        } else if (recorded !== undefined) {
          expect(outcome._tag === "Left" && outcome.left).toMatchObject({
            _tag: "CommandAlreadyRecorded",
            result: recorded.result,
          })
        } else {
          expect(outcome._tag).toBe("Right")
          for (const a of appends) record(model, a.sessionId, a.events, at)
          for (const f of facts) model.facts.set(`${f.sessionId}/${f.commandId}`, { result: f.result, at })
        }
        return
      }
      case "read": {
        const id = STREAMS[op.stream]!
        const expected = model.streams.get(id)!.slice(op.after)
        const tail = yield* s.read(id, { afterSequence: op.after })
        expect(eventsOf(tail)).toEqual(expected.map((e) => e.event))
        expect(sequencesOf(tail)).toEqual(expected.map((_, i) => op.after + i + 1))
        return
      }
    }
  })

const checkModel = (s: SessionStoreService, model: Model) =>
  Effect.gen(function* () {
    for (const id of STREAMS) {
      const expected = model.streams.get(id)!
      const stored = yield* s.read(id)
      expect(eventsOf(stored)).toEqual(expected.map((e) => e.event))
      expect(stored.map((e) => e.at)).toEqual(expected.map((e) => e.at))
      expect(yield* s.version(id)).toBe(expected.length)
    }
    for (const [key, fact] of model.facts) {
      const [sessionId, commandId] = key.split("/") as [SessionId, string]
      expect(Option.getOrUndefined(yield* s.getCommandFact(sessionId, commandId))).toEqual({
        sessionId,
        commandId,
        result: fact.result,
        at: fact.at,
      })
    }
    expect((yield* s.listSessions()).map((summary) => summary.sessionId)).toEqual(model.created)
  })
