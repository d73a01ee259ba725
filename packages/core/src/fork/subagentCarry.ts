/**
 * Subagent carry: when a fork (or a conversation rewind) keeps turns that spawned subagents, each
 * of those subagent sessions is cloned under the new owner with its lineage rewritten, its history
 * cut at the same moment, recursively. Descendants and messages born after the cut stay behind.
 * Clone ids are `carry-v1.<sha256 of the lineage's original id>.<fresh id>`: the hash recognises
 * the same lineage across repeated rewinds and cold loads, the fresh part keeps clones apart. A
 * subagent that cannot be carried becomes a warning; it never fails the operation. The ids and the
 * cut are in `carryLineage.ts`.
 */
import {
  type CarriedSubagent,
  type CarryWarning,
  type CommandId,
  type MessageId,
  refuse,
  type SessionEvent,
  type SessionId,
  SubagentSpawned,
  type TurnId,
} from "@rewind/contracts"
import { Clock, Effect, Option } from "effect"
import { IdGenerator } from "../ports/IdGenerator.js"
import { SessionStore } from "../ports/SessionStore.js"
import { branchView } from "../session/branchView.js"
import type { SessionState, SubagentLink } from "../session/sessionState.js"
import { carryIdFor, currentSubagents, cutStreamAt } from "./carryLineage.js"
import { buildForkBundle, goalsForPrefix, sealBundle } from "./forkBundle.js"
import {
  commitFork,
  type NewStream,
  readSessionStream,
  replayedFork,
  requireCommandId,
} from "./forkCommit.js"
import { validateForkBundle } from "./validateForkBundle.js"

export interface CarryInput {
  /** The session whose kept turns spawned the subagents, and its id. */
  readonly source: SessionState
  readonly sourceSessionId: SessionId
  /** Kept turns of the source, mapped to the turn ids they have in the new owner. */
  readonly turnMap: ReadonlyMap<TurnId, TurnId>
  readonly messageMap: ReadonlyMap<MessageId, MessageId>
  /** The cut: what was born after this time is left behind. */
  readonly cutAt: number
  /** The session the clones will hang under. */
  readonly ownerSessionId: SessionId
  readonly createdAt: number
  /** After an in-place rewind, a subagent untouched by the cut stays as it is. */
  readonly onlyIfCut: boolean
}

export interface CarryPlan {
  readonly streams: ReadonlyArray<NewStream>
  /** Links for the owner's stream, one per carried top-level subagent. */
  readonly links: ReadonlyArray<SubagentSpawned>
  readonly carried: ReadonlyArray<CarriedSubagent>
  readonly warnings: ReadonlyArray<CarryWarning>
}

interface Carried extends CarryPlan {
  readonly cut: boolean
}

const emptyCarry: Carried = { streams: [], links: [], carried: [], warnings: [], cut: false }

const merge = (a: Carried, b: Carried): Carried => ({
  streams: [...a.streams, ...b.streams],
  links: [...a.links, ...b.links],
  carried: [...a.carried, ...b.carried],
  warnings: [...a.warnings, ...b.warnings],
  cut: a.cut || b.cut,
})

const warning = (sessionId: SessionId, reason: CarryWarning["reason"], message: string): Carried => ({
  ...emptyCarry,
  warnings: [{ sessionId, reason, message }],
})

interface Level {
  readonly state: SessionState
  readonly sessionId: SessionId
  readonly turnMap: ReadonlyMap<TurnId, TurnId>
  readonly messageMap: ReadonlyMap<MessageId, MessageId>
  readonly ownerSessionId: SessionId
}

const carryChildren = (
  level: Level,
  cutAt: number,
  createdAt: number,
  lineage: ReadonlySet<SessionId>,
  onlyIfCut: boolean,
): Effect.Effect<Carried, never, SessionStore | IdGenerator> =>
  Effect.gen(function* () {
    let out = emptyCarry
    for (const link of currentSubagents(level.state)) {
      if (!level.turnMap.has(link.turnId)) continue
      // A subagent born after the cut is not part of the family at that moment.
      if (link.spawnedAt > cutAt) {
        out = { ...out, cut: true }
        continue
      }
      const one = yield* carryOne(link, level, cutAt, createdAt, lineage)
      if (onlyIfCut && !one.cut) {
        out = merge(out, { ...emptyCarry, warnings: one.warnings })
        continue
      }
      out = merge(out, one)
    }
    return out
  })

const carryOne = (
  link: SubagentLink,
  level: Level,
  cutAt: number,
  createdAt: number,
  lineage: ReadonlySet<SessionId>,
): Effect.Effect<Carried, never, SessionStore | IdGenerator> =>
  Effect.gen(function* () {
    const id = link.subagentSessionId
    if (lineage.has(id)) return warning(id, "refused", `subagent ${id} appears in its own lineage`)
    const store = yield* SessionStore
    const ids = yield* IdGenerator
    const read = yield* Effect.either(store.read(id))
    if (read._tag === "Left") {
      return warning(id, "unreadable", `subagent session ${id} could not be read: ${read.left.message}`)
    }
    const events = read.right
    const created = events[0]?.event
    if (created === undefined || created._tag !== "SessionCreated") {
      return warning(id, "unreadable", `subagent session ${id} does not exist`)
    }
    const session = created.session
    if (session.kind !== "subagent" || session.parentId !== level.sessionId) {
      return warning(
        id,
        "refused",
        `session ${id} is a ${session.kind} session under ${session.parentId ?? "no parent"}, not a subagent of ${level.sessionId}`,
      )
    }
    const { state, prefix, cut } = cutStreamAt(events, cutAt)
    const cloneId = carryIdFor(id, yield* ids.next("clone"))
    const built = buildForkBundle({
      source: state,
      sourceSessionId: id,
      prefix,
      child: {
        id: cloneId,
        kind: "subagent",
        title: session.title,
        parentId: level.ownerSessionId,
        rootTraceId: session.rootTraceId,
        cwd: session.cwd,
        createdAt,
      },
      idBase: yield* ids.next("fork"),
      forked: { forkKind: "subagent_carry", originMessageId: prefix.at(-1) },
      hideCopies: false,
      goals: goalsForPrefix(state, prefix),
      notices: [],
    })
    const nested = yield* carryChildren(
      { state, sessionId: id, turnMap: built.turnMap, messageMap: built.messageMap, ownerSessionId: cloneId },
      cutAt,
      createdAt,
      new Set([...lineage, id]),
      false,
    )
    const sealed = sealBundle(built, nested.links)
    const problems = validateForkBundle(sealed, {
      sessionsInCommit: new Set(nested.links.map((l) => l.subagentSessionId)),
    })
    if (problems.length > 0) {
      return warning(
        id,
        "invalid_bundle",
        `subagent ${id} could not be copied: ${problems.map((p) => p.message).join("; ")}`,
      )
    }
    const spawnMessage = link.messageId === undefined ? undefined : level.messageMap.get(link.messageId)
    return {
      streams: [{ sessionId: cloneId, events: sealed }, ...nested.streams],
      links: [
        new SubagentSpawned({
          subagentSessionId: cloneId,
          turnId: level.turnMap.get(link.turnId)!,
          spawnedAt: link.spawnedAt,
          carriedFrom: id,
          ...(spawnMessage === undefined ? {} : { messageId: spawnMessage }),
        }),
      ],
      carried: [
        { originalSessionId: id, cloneSessionId: cloneId, parentSessionId: level.ownerSessionId },
        ...nested.carried,
      ],
      warnings: nested.warnings,
      cut: cut || nested.cut,
    } satisfies Carried
  })

/**
 * Plans the carry of every current subagent spawned in the kept turns (born by the cut): the
 * clone streams to create, the links for the owner and what could not be carried. Reads the
 * subagent streams; writes nothing.
 */
export const planSubagentCarry = (
  input: CarryInput,
): Effect.Effect<CarryPlan, never, SessionStore | IdGenerator> =>
  carryChildren(
    {
      state: input.source,
      sessionId: input.sourceSessionId,
      turnMap: input.turnMap,
      messageMap: input.messageMap,
      ownerSessionId: input.ownerSessionId,
    },
    input.cutAt,
    input.createdAt,
    new Set([input.sourceSessionId]),
    input.onlyIfCut,
  )

export interface CarryAfterRewindInput {
  readonly sessionId: SessionId
  readonly commandId: CommandId
}

/**
 * After a conversation rewind, gives the session the family it had at the cut: every subagent of
 * a kept turn whose history (or whose descendants') ran past the cut is cloned, cut at the moment
 * the rewind's target message was born, and linked in place of the original. Idempotent per
 * command id. Subagents the cut did not touch stay linked as they are.
 */
export const carrySubagentsAfterRewind = (input: CarryAfterRewindInput) =>
  Effect.gen(function* () {
    yield* requireCommandId(input.commandId)
    const requestKey = "carry_subagents"
    const replay = yield* replayedFork(input.sessionId, input.commandId, "carry_subagents", requestKey)
    if (Option.isSome(replay)) return replay.value
    const { state } = yield* readSessionStream(input.sessionId)
    const cursor = state.cursor
    if (cursor === undefined) {
      return yield* refuse(
        "unavailable",
        `session ${input.sessionId} was never rewound; there is nothing to carry`,
      )
    }
    const target = state.messages.get(cursor.targetMessageId)!
    const view = branchView(state)
    const kept = new Set(cursor.keptMessageIds)
    const turnMap = new Map<TurnId, TurnId>()
    const messageMap = new Map<MessageId, MessageId>()
    for (const id of view.messageIds) {
      if (!kept.has(id)) continue
      messageMap.set(id, id)
      const m = state.messages.get(id)!
      if (m.role === "user") turnMap.set(m.turnId, m.turnId)
    }
    const at = yield* Clock.currentTimeMillis
    const plan = yield* planSubagentCarry({
      source: state,
      sourceSessionId: input.sessionId,
      turnMap,
      messageMap,
      cutAt: target.createdAt - 1,
      ownerSessionId: input.sessionId,
      createdAt: at,
      onlyIfCut: true,
    })
    return yield* commitFork({
      sessionId: input.sessionId,
      commandId: input.commandId,
      result: {
        command: "carry_subagents",
        requestKey,
        parentSessionId: input.sessionId,
        childSessionId: input.sessionId,
        copiedMessageCount: 0,
        carried: plan.carried,
        warnings: plan.warnings,
      },
      streams: plan.streams,
      ownAppend: { expectedVersion: state.version, events: plan.links as ReadonlyArray<SessionEvent> },
      at,
    })
  })
