/**
 * Conversation scale curves (sessions of 1k, 10k and 100k messages with 100 rewinds): the cold
 * `projectSession` fold, the active branch, the branch view, `evaluateRewindTarget` with the view
 * memoised and cold, and `rewindConversation` on the memory store. The largest size carries the
 * foundation targets: active branch under 50 ms, evaluation under 1 ms (medians).
 *
 * Each is held against a floor doing the least work of the same shape: a fold that only indexes
 * messages, a plain copy of the stream's ids, a Map of positions, two Map lookups, and `loadSession`
 * (a rewind must at least load the session).
 */

import { layerBackgroundTasks, MemorySessionStore } from "@rewind/adapter-memory"
import type { MessageId, SessionEvent, StoredEvent } from "@rewind/contracts"
import {
  activeBranch,
  type BackgroundTasks,
  branchView,
  evaluateRewindTarget,
  loadSession,
  projectSession,
  rewindConversation,
  type SessionState,
  type SessionStore,
} from "@rewind/core"
import { Effect, Layer } from "effect"
import type { BenchCase, BenchContext } from "./harness/types.js"
import { buildSyntheticSession, type SyntheticSession } from "./session/syntheticSession.js"

/** Results are kept here so no timed call can be optimised away as dead code. */
let sink: unknown
const keep = (value: unknown): void => {
  sink = value
}
export const lastKept = () => sink

const sameIds = (a: ReadonlyArray<MessageId>, b: ReadonlyArray<MessageId>) =>
  a.length === b.length && a.every((id, i) => id === b[i])

const buildSession = (ctx: BenchContext): SyntheticSession => {
  const started = performance.now()
  const session = buildSyntheticSession({ messages: ctx.size!, rewinds: ctx.sizes.rewinds, seed: ctx.seed })
  ctx.log(
    `built a ${session.messageCount}-message session (${session.events.length} events, ${session.rewinds} rewinds, ${session.checkpoints} checkpoints, ${session.compactions} compactions) in ${(performance.now() - started).toFixed(0)} ms`,
  )
  return session
}

const isLargest = (ctx: BenchContext) => ctx.size === Math.max(...ctx.sizes.messages)

/** The least a fold can do: index every message by id and keep the stream order. */
const minimalFold = (events: ReadonlyArray<StoredEvent>) => {
  const messages = new Map<MessageId, SessionEvent>()
  const order: Array<MessageId> = []
  for (const stored of events) {
    const event = stored.event
    if (event._tag === "MessageAppended") {
      if (!messages.has(event.message.id)) order.push(event.message.id)
      messages.set(event.message.id, event)
    }
  }
  return { messages, order }
}

/**
 * The scan an evaluation cannot avoid without an index of checkpoints by position: look up the
 * target's position, then every checkpoint anchor's.
 */
const checkpointsAtOrAfter = (state: SessionState, target: MessageId): number => {
  const positions = branchView(state).positions
  const at = positions.get(target)!
  let n = 0
  for (const c of state.checkpoints) {
    const p = positions.get(c.anchorMessageId)
    if (p !== undefined && p >= at) n++
  }
  return n
}

const indexPositions = (ids: ReadonlyArray<MessageId>) => {
  const positions = new Map<MessageId, number>()
  for (let i = 0; i < ids.length; i++) positions.set(ids[i]!, i)
  return positions
}

export const conversationProjection: BenchCase = {
  name: "conversation-projection",
  group: "conversation",
  description:
    "projectSession, activeBranch, branchView and evaluateRewindTarget on a synthetic session with 100 rewinds",
  sizes: (sizes) => sizes.messages,
  sizeUnit: "messages",
  run: async (ctx) => {
    const session = buildSession(ctx)
    const state = projectSession(session.events)
    // The timed functions must compute the right thing before their speed means anything.
    if (!sameIds(activeBranch(state), session.expectedActive)) {
      throw new Error("projectSession/activeBranch disagree with the synthetic session's own active branch")
    }
    const evaluation = evaluateRewindTarget(state, session.rewindTarget, "both")
    if (evaluation.strategy !== "active_chain" || !evaluation.allowedScopes.includes("both")) {
      throw new Error(`unexpected evaluation of the rewind target: ${JSON.stringify(evaluation)}`)
    }
    ctx.sampleMemory()
    const shape = `${session.rewinds} rewinds, ${session.checkpoints} checkpoints, ${session.compactions} compactions`

    await ctx.compare({
      series: "projectSession (cold fold of the whole stream)",
      subject: {
        kind: "in-process",
        label: "projectSession",
        fn: () => keep(projectSession(session.events)),
      },
      baseline: {
        kind: "in-process",
        label: "fold that only indexes messages",
        fn: () => keep(minimalFold(session.events)),
      },
      expectedGrowth: "whole",
      notes: [`${session.events.length} events; ${shape}`],
    })

    await ctx.compare({
      series: "activeBranch after 100 rewinds",
      subject: { kind: "in-process", label: "activeBranch", fn: () => keep(activeBranch(state)) },
      baseline: {
        kind: "in-process",
        label: "copy of the stream's message ids",
        fn: () => keep(state.messageOrder.slice()),
      },
      expectedGrowth: "whole",
      ...(isLargest(ctx)
        ? {
            target: {
              description: `active branch of a ${ctx.size}-message session after 100 rewinds`,
              maxMedianMs: 50,
            },
          }
        : {}),
      notes: [`active branch: ${session.expectedActive.length} of ${session.messageCount} messages`],
    })

    let fresh: SessionState = state
    const freshCopy = () => {
      // An identical state under a new identity, so the memoised branch view is not reused.
      fresh = projectSession([], state)
    }

    await ctx.compare({
      series: "branchView (cold: positions, compactions, model history)",
      subject: {
        kind: "in-process",
        label: "branchView",
        beforeEach: freshCopy,
        fn: () => keep(branchView(fresh)),
      },
      baseline: {
        kind: "in-process",
        label: "Map of active-branch positions",
        fn: () => keep(indexPositions(session.expectedActive)),
      },
      expectedGrowth: "whole",
    })

    branchView(state)
    await ctx.compare({
      series: "evaluateRewindTarget (branch view memoised)",
      subject: {
        kind: "in-process",
        label: "evaluateRewindTarget",
        fn: () => keep(evaluateRewindTarget(state, session.rewindTarget, "both")),
      },
      baseline: {
        kind: "in-process",
        label: "position lookups: the target and every checkpoint's anchor",
        fn: () => keep(checkpointsAtOrAfter(state, session.rewindTarget)),
      },
      expectedGrowth: "whole",
      ...(isLargest(ctx)
        ? { target: { description: `evaluateRewindTarget on a ${ctx.size}-message session`, maxMedianMs: 1 } }
        : {}),
      notes: [`scans the session's ${session.checkpoints} checkpoints for ones at or after the target`],
    })

    await ctx.compare({
      series: "evaluateRewindTarget (cold state: builds the branch view)",
      subject: {
        kind: "in-process",
        label: "evaluateRewindTarget, cold",
        beforeEach: freshCopy,
        fn: () => keep(evaluateRewindTarget(fresh, session.rewindTarget, "both")),
      },
      baseline: {
        kind: "in-process",
        label: "Map of active-branch positions",
        fn: () => keep(indexPositions(session.expectedActive)),
      },
      expectedGrowth: "whole",
    })
  },
}

export const conversationRewind: BenchCase = {
  name: "conversation-rewind",
  group: "conversation",
  description:
    "rewindConversation on the memory store (load, evaluate, append the cursor) against loadSession",
  sizes: (sizes) => sizes.messages,
  sizeUnit: "messages",
  run: async (ctx) => {
    const session = buildSession(ctx)
    const data = MemorySessionStore.makeMemoryStoreData()
    const store = MemorySessionStore.makeMemorySessionStore(data)
    Effect.runSync(
      store.append({
        sessionId: session.sessionId,
        expectedVersion: 0,
        events: session.events.map((e) => e.event),
        at: 0,
      }),
    )
    const rows = data.streams.get(session.sessionId)!
    // Each iteration gets its own copy of the stream, so every rewind starts from the same session.
    const layerOfCopy = () => {
      const copy: MemorySessionStore.MemoryStoreData = {
        streams: new Map([[session.sessionId, [...rows]]]),
        sessions: new Map(data.sessions),
        facts: new Map(),
      }
      return Layer.mergeAll(MemorySessionStore.layerFrom(copy), layerBackgroundTasks)
    }
    const rewind = (layer: Layer.Layer<SessionStore | BackgroundTasks>) =>
      Effect.runPromise(
        rewindConversation({ sessionId: session.sessionId, messageId: session.rewindTarget }).pipe(
          Effect.provide(layer),
        ),
      )
    const load = (layer: Layer.Layer<SessionStore | BackgroundTasks>) =>
      Effect.runPromise(loadSession(session.sessionId).pipe(Effect.provide(layer)))

    const check = await rewind(layerOfCopy())
    const position = session.expectedActive.indexOf(session.rewindTarget)
    if (!sameIds(check.view.messageIds, session.expectedActive.slice(0, position))) {
      throw new Error("rewindConversation did not cut the branch before the target")
    }
    ctx.sampleMemory()

    let layer = layerOfCopy()
    const freshStore = () => {
      layer = layerOfCopy()
    }
    await ctx.compare({
      series: "rewindConversation (memory store)",
      subject: {
        kind: "in-process",
        label: "rewindConversation",
        beforeEach: freshStore,
        fn: async () => keep(await rewind(layer)),
      },
      baseline: {
        kind: "in-process",
        label: "loadSession (read, decode, fold)",
        beforeEach: freshStore,
        fn: async () => keep(await load(layer)),
      },
      expectedGrowth: "whole",
      notes: [
        `stream of ${rows.length} events; each rewind event carries the kept prefix (up to ${session.expectedActive.length} ids)`,
      ],
    })
  },
}
