/**
 * Fork benchmark: forking a session of 10,000 messages (in full mode; each with parts, every turn
 * pinned) in one commit, against the baseline of appending the same messages one by one into a new
 * stream, measured in the same rounds on the same store, once on the memory store and once on a
 * SQLite file. Loading the parent, which every fork does first, is the floor.
 */
import { join } from "node:path"
import { MemorySessionStore } from "@rewind/adapter-memory"
import { SqliteSessionStore } from "@rewind/adapter-sqlite"
import {
  type CommandId,
  ForkBoundaryPinned,
  Message,
  MessageAppended,
  type MessageId,
  Part,
  PartAppended,
  type PartId,
  Session,
  SessionCreated,
  type SessionEvent,
  type SessionId,
  type TraceId,
  TurnCompleted,
  type TurnId,
  TurnStarted,
} from "@rewind/contracts"
import { forkAtMessage, IdGenerators, layerSessionStateCache, loadSession, SessionStore } from "@rewind/core"
import { Effect, Layer, ManagedRuntime } from "effect"
import type { BenchCase, BenchContext } from "./harness/types.js"

/** The fork target: a fork of a session this long should take under half a second. */
const TARGET = { messages: 10_000, maxMedianMs: 500 }

const CHUNK = 2_000

/**
 * The parent's stream, written directly (host commands would reload the session per message);
 * also the parent of the PostgreSQL case's fork series.
 */
export const parentEvents = (sessionId: SessionId, messages: number) => {
  const events: Array<SessionEvent> = [
    new SessionCreated({
      session: new Session({
        id: sessionId,
        rootTraceId: "trace_bench" as TraceId,
        kind: "main",
        title: "bench",
        cwd: "/bench",
        createdAt: 0,
      }),
    }),
  ]
  const messageEvents: Array<ReadonlyArray<SessionEvent>> = []
  let lastBoundary: MessageId | undefined
  for (let turn = 0; turn < messages / 2; turn++) {
    const turnId = `turn_${turn}` as TurnId
    const user = `u_${turn}` as MessageId
    const reply = `a_${turn}` as MessageId
    const message = (id: MessageId, role: "user" | "assistant") =>
      new MessageAppended({
        message: new Message({
          id,
          sessionId,
          turnId,
          role,
          status: "ok",
          visibility: "all",
          createdAt: turn,
        }),
      })
    const part = (id: string, messageId: MessageId, kind: "text" | "reasoning", text: string) =>
      new PartAppended({ part: new Part({ id: id as PartId, messageId, kind, text }) })
    const userGroup = [
      message(user, "user"),
      part(`pu_${turn}`, user, "text", `question ${turn}: ${"x".repeat(80)}`),
    ]
    const replyGroup = [
      message(reply, "assistant"),
      part(`pr_${turn}`, reply, "reasoning", `thinking about ${turn}`),
      part(`pa_${turn}`, reply, "text", `answer ${turn}: ${"y".repeat(200)}`),
    ]
    messageEvents.push(userGroup, replyGroup)
    events.push(
      ...userGroup,
      new TurnStarted({ turnId, userMessageId: user }),
      ...replyGroup,
      new ForkBoundaryPinned({
        messageId: reply,
        boundary: {
          turnId,
          historyRoundCount: turn + 1,
          orderedMessageIds: [user, reply],
          boundaryMessageId: reply,
        },
      }),
      new TurnCompleted({ turnId, status: "completed" }),
    )
    lastBoundary = reply
  }
  return { events, messageEvents, lastBoundary: lastBoundary! }
}

const measureStore = async (
  ctx: BenchContext,
  storeLabel: string,
  storeLayer: Layer.Layer<SessionStore, unknown>,
  parentCached: boolean,
) => {
  const messages = ctx.size!
  const label = `${storeLabel}, ${parentCached ? "parent cached" : "cold"}`
  const runtime = ManagedRuntime.make(
    Layer.mergeAll(
      storeLayer,
      IdGenerators.layerRandom,
      parentCached ? layerSessionStateCache() : Layer.empty,
    ),
  )
  try {
    const parentId = "ses_bench_parent" as SessionId
    const parent = parentEvents(parentId, messages)
    await runtime.runPromise(
      Effect.gen(function* () {
        const store = yield* SessionStore
        for (let i = 0; i < parent.events.length; i += CHUNK) {
          yield* store.append({
            sessionId: parentId,
            expectedVersion: i,
            events: parent.events.slice(i, i + CHUNK),
            at: 0,
          })
        }
      }),
    )

    let n = 0
    const fork = () =>
      runtime.runPromise(
        forkAtMessage({
          sessionId: parentId,
          messageId: parent.lastBoundary,
          commandId: `bench-${n++}` as CommandId,
        }),
      )
    const check = await fork()
    if (check.copiedMessageCount !== messages) {
      throw new Error(`the fork copied ${check.copiedMessageCount} messages, expected ${messages}`)
    }
    ctx.sampleMemory()

    // The baseline: the same messages (with their parts), one append per message, into a new stream.
    let b = 0
    const appendOneByOne = () =>
      runtime.runPromise(
        Effect.gen(function* () {
          const store = yield* SessionStore
          const sessionId = `ses_bench_baseline_${b++}` as SessionId
          let version = (yield* store.append({
            sessionId,
            expectedVersion: 0,
            events: [parent.events[0]!],
            at: 0,
          })).version
          for (const group of parent.messageEvents) {
            version = (yield* store.append({ sessionId, expectedVersion: version, events: group, at: 0 }))
              .version
          }
        }),
      )

    await ctx.compare({
      series: `fork at the last message (${label})`,
      subject: { kind: "in-process", label: "forkAtMessage (one commit)", fn: fork },
      baseline: { kind: "in-process", label: "append the messages one by one", fn: appendOneByOne },
      limit: {
        kind: "in-process",
        label: parentCached ? "loadSession of the parent (cached)" : "loadSession of the parent",
        fn: () => runtime.runPromise(loadSession(parentId)),
      },
      expectedGrowth: "whole",
      ...(messages === TARGET.messages
        ? {
            target: {
              description: `fork of a ${messages}-message session (${label})`,
              maxMedianMs: TARGET.maxMedianMs,
            },
          }
        : {}),
      notes: [
        `${parent.events.length} events in the parent; limit: loading it, which every fork does first`,
        ...(parentCached
          ? ["the parent's folded state is in the session-state cache (as in the embedded default)"]
          : ["no session-state cache: every fork reads and folds the whole parent"]),
      ],
    })
  } finally {
    await runtime.dispose()
  }
}

export const fork: BenchCase = {
  name: "fork",
  group: "conversation",
  description:
    "forkAtMessage of a whole session in one commit vs appending its messages one by one, on the memory and SQLite stores",
  // The session-length curve (1k, 10k, 100k messages) in a full run; the target is judged at 10k.
  sizes: (sizes, mode) => (mode === "full" ? [...sizes.messages] : [sizes.messages[0]!]),
  sizeUnit: "messages",
  run: async (ctx) => {
    for (const parentCached of [false, true]) {
      await measureStore(ctx, "memory store", MemorySessionStore.layer, parentCached)
      await measureStore(
        ctx,
        "SQLite file",
        SqliteSessionStore.layer({
          path: join(ctx.tempDir(`fork-sqlite-${parentCached ? "cached" : "cold"}`), "store.db"),
        }),
        parentCached,
      )
    }
  },
}
