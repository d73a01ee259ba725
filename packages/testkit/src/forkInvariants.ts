/**
 * Invariant 6 as a property over random sessions: a fork leaves every existing stream unchanged
 * byte for byte, every reference in the child points inside the child (and inside its carried
 * subagent clones), the child's copy is faithful to the parent's active branch, and replaying the
 * fork command yields the same child and writes nothing. Random programs mix turns (pinned, plain,
 * failed, left running; with goals, verifications, model selections, UI-only replies, subagents),
 * conversation rewinds, compactions, forks and side chats, over a family of sessions that grows
 * as it runs, so forks of forks of forks, forks of side chats and forks of subagents all occur.
 *
 * Run it on any SessionStore: `checkForkInvariants(() => MemorySessionStore.layer)`. The seed is
 * fixed, overridable with REWIND_FORK_SEED (REWIND_FORK_RUNS sets the number of runs), and returned
 * so a test can print it and a failure can be replayed.
 */
import { expect } from "@effect/vitest"
import type { CommandId, GoalId, MessageId, RunId, SessionId } from "@rewind/contracts"
import {
  appendReply,
  appendUserMessage,
  applyCompaction,
  branchView,
  carryLineageOf,
  completeTurn,
  completeTurnWithBoundary,
  createSession,
  createSideChat,
  type ForkOutcome,
  forkAtMessage,
  IdGenerators,
  loadSession,
  recordExecutionState,
  recordModelSelection,
  recordVerification,
  rewindConversation,
  type SessionState,
  SessionStore,
  sideChatPrefix,
  spawnSubagent,
  updateGoal,
  validateForkBundle,
} from "@rewind/core"
import { Effect, FastCheck as fc, Layer } from "effect"
import { completedTurn, storedLines } from "./forkFixtures.js"
import { layerScriptedTasks } from "./scriptedBackgroundTasks.js"
import { layerSteppingClock } from "./steppingClock.js"

type Pick = number

export type ForkProgramOp =
  | {
      readonly _tag: "Turn"
      readonly session: Pick
      readonly intermediate: number
      readonly uiOnlyReply: boolean
      readonly outcome: "pinned" | "plain" | "failed" | "running"
      readonly goal: boolean
      readonly verify: boolean
      readonly model: boolean
      readonly subagent: boolean
    }
  | { readonly _tag: "Rewind"; readonly session: Pick; readonly pick: number }
  | { readonly _tag: "Compact"; readonly session: Pick; readonly from: number; readonly span: number }
  | { readonly _tag: "Fork"; readonly session: Pick; readonly pick: number }
  | { readonly _tag: "SideChat"; readonly session: Pick }

// -1 means "the newest session": it keeps chains of forks of forks likely.
const sessionPick = fc.oneof(fc.constant(-1), fc.nat(24))

const opArbitrary: fc.Arbitrary<ForkProgramOp> = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.record({
      _tag: fc.constant("Turn" as const),
      session: sessionPick,
      intermediate: fc.nat(2),
      uiOnlyReply: fc.boolean(),
      outcome: fc.constantFrom<"pinned" | "plain" | "failed" | "running">(
        "pinned",
        "pinned",
        "pinned",
        "plain",
        "failed",
        "running",
      ),
      goal: fc.boolean(),
      verify: fc.boolean(),
      model: fc.boolean(),
      subagent: fc.constantFrom(false, false, true),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({ _tag: fc.constant("Rewind" as const), session: sessionPick, pick: fc.nat(50) }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      _tag: fc.constant("Compact" as const),
      session: sessionPick,
      from: fc.nat(50),
      span: fc.nat(4),
    }),
  },
  {
    weight: 3,
    arbitrary: fc.record({ _tag: fc.constant("Fork" as const), session: sessionPick, pick: fc.nat(50) }),
  },
  { weight: 1, arbitrary: fc.record({ _tag: fc.constant("SideChat" as const), session: sessionPick }) },
)

/**
 * Every program opens with the shapes the invariant is most about, so each run reaches them
 * whatever the seed: a turn that spawns a subagent, a side chat, a fork of that side chat and a
 * fork of that fork (three deep), and a fork that carries the subagent. The random tail then
 * grows, rewinds, compacts and forks the family further.
 */
const PRELUDE: ReadonlyArray<ForkProgramOp> = [
  {
    _tag: "Turn",
    session: 0,
    intermediate: 1,
    uiOnlyReply: true,
    outcome: "pinned",
    goal: true,
    verify: true,
    model: true,
    subagent: true,
  },
  { _tag: "SideChat", session: 0 },
  { _tag: "Fork", session: -1, pick: 0 },
  { _tag: "Fork", session: -1, pick: 0 },
  { _tag: "Fork", session: 0, pick: 0 },
]

export const forkProgramArbitrary = fc
  .array(opArbitrary, { minLength: 2, maxLength: 26 })
  .map((tail): ReadonlyArray<ForkProgramOp> => [...PRELUDE, ...tail])

interface World {
  readonly family: Array<SessionId>
  /** How many forks (or side chats) deep each session is. */
  readonly depth: Map<SessionId, number>
  commands: number
  forks: number
  sideChats: number
  forksOfSideChats: number
  maxDepth: number
  carried: number
}

const pickSession = (world: World, pick: Pick) =>
  pick < 0 ? world.family[world.family.length - 1]! : world.family[pick % world.family.length]!

/**
 * The store as a fork must leave it: the parent's stream as stored lines (byte for byte) and every
 * other stream's version (streams are append-only, so an unchanged version is an unchanged stream).
 */
const snapshot = (parentId: SessionId) =>
  Effect.gen(function* () {
    const store = yield* SessionStore
    const versions = new Map<SessionId, number>()
    for (const s of yield* store.listSessions()) versions.set(s.sessionId, s.version)
    return { parentLines: yield* storedLines(parentId), versions }
  })

const partsOf = (state: SessionState, id: MessageId) =>
  (state.parts.get(id) ?? []).map((p) => JSON.stringify([p.kind, p.text, p.toolName, p.data]))

/** Checks one fork or side chat against invariant 6, then replays it. */
const checkFork = (
  parentId: SessionId,
  parentBefore: SessionState,
  before: Effect.Effect.Success<ReturnType<typeof snapshot>>,
  result: ForkOutcome,
  expectedPrefix: ReadonlyArray<MessageId>,
  sideChat: boolean,
  replay: Effect.Effect<ForkOutcome, unknown, SessionStore | IdGenerators.IdGenerator>,
) =>
  Effect.gen(function* () {
    const store = yield* SessionStore
    expect(result.replayed).toBe(false)
    // 1. Nothing that existed was touched: the parent byte for byte, every other stream's version.
    const after = yield* snapshot(parentId)
    expect(after.parentLines).toEqual(before.parentLines)
    for (const [id, version] of before.versions)
      expect(after.versions.get(id), `version of ${id}`).toBe(version)
    const created = [...after.versions.keys()].filter((id) => !before.versions.has(id))
    const clones = result.carried.map((c) => c.cloneSessionId)
    expect(new Set(created)).toEqual(new Set([result.childSessionId, ...clones]))

    // 2. Every reference in the child and its clones points inside what the fork created.
    const cloneSet = new Set(clones)
    for (const id of [result.childSessionId, ...clones]) {
      const events = (yield* store.read(id)).map((e) => e.event)
      expect(validateForkBundle(events, { sessionsInCommit: cloneSet }), `bundle of ${id}`).toEqual([])
    }
    for (const c of result.carried) {
      const clone = yield* loadSession(c.cloneSessionId)
      expect(clone.session?.parentId).toBe(c.parentSessionId)
      expect(clone.session?.kind).toBe("subagent")
      expect(carryLineageOf(c.cloneSessionId)).toBe(carryLineageOf(c.originalSessionId))
    }

    // 3. The copy is the parent's active branch up to the origin, with fresh ids.
    const child = yield* loadSession(result.childSessionId)
    expect(child.session?.parentId).toBe(parentId)
    expect(child.session?.rootTraceId).toBe(parentBefore.session?.rootTraceId)
    const copies = branchView(child)
      .messageIds.map((id) => child.messages.get(id)!)
      .filter((m) => m.forkOrigin !== undefined)
    expect(copies.map((m) => m.forkOrigin!.messageId)).toEqual(expectedPrefix)
    expect(result.copiedMessageCount).toBe(expectedPrefix.length)
    for (const m of copies) {
      const source = parentBefore.messages.get(m.forkOrigin!.messageId)!
      expect(m.forkOrigin!.sessionId).toBe(parentId)
      expect(parentBefore.messages.has(m.id)).toBe(false)
      expect([m.role, m.status]).toEqual([source.role, source.status])
      expect(m.visibility).toBe(sideChat ? "model_only" : source.visibility)
      expect(partsOf(child, m.id)).toEqual(partsOf(parentBefore, source.id))
      if (sideChat) expect(m.anchor?.goalBoundary).toBeUndefined()
    }
    for (const g of child.goals.values()) expect(g.liveRun).toBeUndefined()
    if (sideChat) expect([child.goals.size, child.verifications.size]).toEqual([0, 0])

    // 4. Replaying the command answers the same child and writes nothing.
    const childLines = yield* storedLines(result.childSessionId)
    const again = yield* replay
    expect(again).toEqual({ ...result, replayed: true })
    expect(yield* snapshot(parentId)).toEqual(after)
    expect(yield* storedLines(result.childSessionId)).toEqual(childLines)
  })

const runOp = (world: World, op: ForkProgramOp) =>
  Effect.gen(function* () {
    const sessionId = pickSession(world, op.session)
    const state = yield* loadSession(sessionId)
    const view = branchView(state)
    switch (op._tag) {
      case "Turn": {
        const user = yield* appendUserMessage(sessionId, { text: `question ${world.commands++}` })
        let goalId: GoalId | undefined = [...state.goals.keys()][0]
        if (op.goal) {
          const goal = yield* updateGoal(sessionId, {
            ...(goalId === undefined ? { text: "the goal" } : { goalId }),
            tokensUsed: world.commands,
            liveRun: { runId: `run_${world.commands}` as RunId, turnId: user.turnId },
          })
          goalId = goal.goalId
        }
        for (let i = 0; i < op.intermediate; i++) {
          yield* appendReply(sessionId, {
            turnId: user.turnId,
            parts: [
              { kind: "tool_call", toolName: "Read", data: { i } },
              { kind: "tool_result", text: `r${i}` },
            ],
          })
        }
        if (op.uiOnlyReply) {
          yield* appendReply(sessionId, {
            turnId: user.turnId,
            parts: [{ kind: "divider", text: "ui" }],
            visibility: "ui_only",
          })
        }
        if (op.subagent) {
          const sub = yield* spawnSubagent({ parentSessionId: sessionId, turnId: user.turnId, title: "sub" })
          world.family.push(sub.id)
          yield* completedTurn(sub.id, "sub work")
        }
        if (op.outcome === "running") return
        const final = yield* appendReply(sessionId, {
          turnId: user.turnId,
          parts: [{ kind: "text", text: `answer ${world.commands}` }],
          ...(op.outcome === "failed" ? { status: "error" as const } : {}),
        })
        if (op.verify) {
          yield* recordVerification(sessionId, {
            messageId: final.messageId,
            outcome: "passed",
            summary: "checked",
            ...(goalId === undefined ? {} : { goalId }),
          })
        }
        if (op.model) {
          yield* recordModelSelection(sessionId, final.messageId, {
            provider: "p",
            model: `m${world.commands}`,
          })
          yield* recordExecutionState(sessionId, final.messageId, { mode: `mode${world.commands}` })
        }
        if (op.outcome === "plain") yield* completeTurn(sessionId, user.turnId)
        else yield* completeTurnWithBoundary(sessionId, user.turnId)
        return
      }
      case "Rewind": {
        const users = view.messageIds.filter((id) => state.messages.get(id)?.role === "user")
        if (users.length === 0) return
        yield* rewindConversation({ sessionId, messageId: users[op.pick % users.length]! })
        return
      }
      case "Compact": {
        if (view.messageIds.length === 0) return
        const from = op.from % view.messageIds.length
        const to = Math.min(view.messageIds.length - 1, from + op.span)
        // A range over a summary or a compacted message is refused; that is the host's business.
        yield* Effect.ignore(
          applyCompaction(sessionId, {
            fromMessageId: view.messageIds[from]!,
            toMessageId: view.messageIds[to]!,
            summaryText: "summary",
          }),
        )
        return
      }
      case "Fork": {
        const anchored = view.messageIds.filter((id) => state.messages.get(id)?.anchor !== undefined)
        if (anchored.length === 0) return
        const messageId = anchored[op.pick % anchored.length]!
        const commandId = `fork-${world.commands++}` as CommandId
        const before = yield* snapshot(sessionId)
        const fork = forkAtMessage({ sessionId, messageId, commandId })
        const result = yield* fork
        const prefix = view.messageIds.slice(0, view.positions.get(messageId)! + 1)
        yield* checkFork(sessionId, state, before, result, prefix, false, fork)
        world.family.push(result.childSessionId, ...result.carried.map((c) => c.cloneSessionId))
        const depth = (world.depth.get(sessionId) ?? 0) + 1
        world.depth.set(result.childSessionId, depth)
        world.maxDepth = Math.max(world.maxDepth, depth)
        world.forks++
        world.carried += result.carried.length
        if (state.session?.kind === "selection_side_chat") world.forksOfSideChats++
        return
      }
      case "SideChat": {
        const prefix = sideChatPrefix(state).filter((id) => {
          const m = state.messages.get(id)!
          return m.visibility !== "ui_only" || m.role === "user"
        })
        if (prefix.length === 0) return
        const commandId = `side-${world.commands++}` as CommandId
        const before = yield* snapshot(sessionId)
        const side = createSideChat({ sessionId, commandId })
        const result = yield* side
        yield* checkFork(sessionId, state, before, result, prefix, true, side)
        world.family.push(result.childSessionId)
        world.depth.set(result.childSessionId, (world.depth.get(sessionId) ?? 0) + 1)
        world.sideChats++
        return
      }
    }
  })

export interface ForkRunStats {
  readonly forks: number
  readonly sideChats: number
  readonly forksOfSideChats: number
  readonly maxDepth: number
  readonly carried: number
  readonly sessions: number
}

/** Runs one random program on a fresh store, checking every fork and side chat as it goes. */
export const runForkProgram = (
  makeStoreLayer: () => Layer.Layer<SessionStore, unknown>,
  program: ReadonlyArray<ForkProgramOp>,
) =>
  Effect.gen(function* () {
    const root = yield* createSession({ title: "root", cwd: "/workspace" })
    const world: World = {
      family: [root.id],
      depth: new Map(),
      commands: 0,
      forks: 0,
      sideChats: 0,
      forksOfSideChats: 0,
      maxDepth: 0,
      carried: 0,
    }
    for (const op of program) yield* runOp(world, op)
    return {
      forks: world.forks,
      sideChats: world.sideChats,
      forksOfSideChats: world.forksOfSideChats,
      maxDepth: world.maxDepth,
      carried: world.carried,
      sessions: world.family.length,
    } satisfies ForkRunStats
  }).pipe(
    Effect.provide(
      Layer.mergeAll(
        makeStoreLayer(),
        IdGenerators.layerSequential("p"),
        layerScriptedTasks,
        layerSteppingClock(),
      ),
    ),
    Effect.scoped,
  )

export const DEFAULT_FORK_SEED = 6_062_025

const envInteger = (name: string): number | undefined => {
  const value = Number(globalThis.process?.env?.[name])
  return Number.isInteger(value) ? value : undefined
}

export interface ForkInvariantCoverage {
  readonly forks: number
  readonly sideChats: number
  readonly forksOfSideChats: number
  /** The longest chain of forks (and side chats) seen: 3 means a fork of a fork of a fork. */
  readonly maxDepth: number
  readonly carriedSubagents: number
}

/**
 * Checks invariant 6 over random programs on fresh stores from `makeStoreLayer`. Resolves with
 * the seed, the number of runs and what the programs covered; rejects with the counterexample
 * when a fork breaks the invariant, or when the programs never reached forks of forks of forks,
 * forks of side chats or carried subagents (a property that never gets there proves nothing).
 */
export const checkForkInvariants = async (
  makeStoreLayer: () => Layer.Layer<SessionStore, unknown>,
  options: { readonly numRuns?: number; readonly seed?: number } = {},
): Promise<{ readonly seed: number; readonly numRuns: number; readonly coverage: ForkInvariantCoverage }> => {
  const seed = options.seed ?? envInteger("REWIND_FORK_SEED") ?? DEFAULT_FORK_SEED
  const numRuns = options.numRuns ?? envInteger("REWIND_FORK_RUNS") ?? 30
  const total = { forks: 0, sideChats: 0, forksOfSideChats: 0, maxDepth: 0, carriedSubagents: 0 }
  await fc.assert(
    fc.asyncProperty(forkProgramArbitrary, async (program) => {
      const stats = await Effect.runPromise(runForkProgram(makeStoreLayer, program))
      total.forks += stats.forks
      total.sideChats += stats.sideChats
      total.forksOfSideChats += stats.forksOfSideChats
      total.carriedSubagents += stats.carried
      total.maxDepth = Math.max(total.maxDepth, stats.maxDepth)
    }),
    { seed, numRuns },
  )
  if (
    total.forks === 0 ||
    total.sideChats === 0 ||
    total.forksOfSideChats === 0 ||
    total.maxDepth < 3 ||
    total.carriedSubagents === 0
  ) {
    throw new Error(
      `fork invariants (seed ${seed}, ${numRuns} runs) did not cover what they check: ${JSON.stringify(total)}`,
    )
  }
  return { seed, numRuns, coverage: total }
}
