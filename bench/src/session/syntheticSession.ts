/**
 * A synthetic session stream of a given length, built the way a long agent session grows: turns of
 * a user message and an assistant reply (each with a text part), a file checkpoint every few turns,
 * a compaction now and then, and a number of conversation rewinds spread over the session, each
 * cutting the last two turns. The builder tracks the active branch itself, so the cases can check
 * that the core's projection agrees before timing anything.
 */
import {
  Checkpoint,
  CheckpointCreated,
  CompactionApplied,
  ConversationRewound,
  Message,
  MessageAppended,
  type MessageId,
  Part,
  PartAppended,
  type PartId,
  type Role,
  Session,
  SessionCreated,
  type SessionEvent,
  type SessionId,
  type StoredEvent,
  type TraceId,
  TurnCompleted,
  type TurnId,
  TurnStarted,
} from "@rewind/contracts"
import { Schema } from "effect"
import { makeRng } from "../workspace/prng.js"

export interface SyntheticSessionSpec {
  /** Messages in the stream (cut branches included). */
  readonly messages: number
  readonly rewinds: number
  readonly seed: number
  /** A checkpoint on every n-th turn. */
  readonly checkpointEveryTurns?: number
  /** A compaction after every n messages (default: about twenty per session). */
  readonly compactionEveryMessages?: number
}

export interface SyntheticSession {
  readonly sessionId: SessionId
  readonly events: ReadonlyArray<StoredEvent>
  readonly messageCount: number
  readonly rewinds: number
  readonly checkpoints: number
  readonly compactions: number
  /** The active branch as the builder tracked it. */
  readonly expectedActive: ReadonlyArray<MessageId>
  /** A user message about ten turns before the end of the active branch, with checkpoints after it. */
  readonly rewindTarget: MessageId
}

const SESSION_ID = "ses_bench" as SessionId
const WORDS = [
  "fix",
  "the",
  "build",
  "add",
  "a",
  "test",
  "for",
  "rewind",
  "then",
  "refactor",
  "store",
  "again",
]

const decodeCheckpoint = Schema.decodeUnknownSync(Checkpoint)
/**
 * Constructors skip re-validating what the builder made (validating 100 kept prefixes of up to
 * 100,000 ids each would dominate the setup). The ids are well-formed by construction, and the
 * conversation-rewind case puts every event through the store's encode/decode, which validates.
 */
const UNCHECKED = true

export const buildSyntheticSession = (spec: SyntheticSessionSpec): SyntheticSession => {
  const checkpointEvery = spec.checkpointEveryTurns ?? 10
  const compactionEvery = spec.compactionEveryMessages ?? Math.max(500, Math.floor(spec.messages / 20))
  const rng = makeRng(spec.seed)
  const events: Array<SessionEvent> = [
    new SessionCreated({
      session: new Session({
        id: SESSION_ID,
        rootTraceId: "trace_bench" as TraceId,
        kind: "main",
        title: "synthetic benchmark session",
        cwd: "/workspace",
        createdAt: 0,
      }),
    }),
  ]
  const active: Array<MessageId> = []
  const roles = new Map<MessageId, Role>()
  let lastInStream: MessageId | undefined
  let messageCount = 0
  let turnCount = 0
  let checkpoints = 0
  let compactions = 0
  let compactedUpTo = 0
  let rewindsDone = 0
  let generation = 0
  const rewindEvery = Math.floor(spec.messages / (spec.rewinds + 1))

  const text = () => {
    const n = rng.int(8, 24)
    const words: Array<string> = []
    for (let i = 0; i < n; i++) words.push(rng.pick(WORDS))
    return words.join(" ")
  }

  const message = (role: Role, turnId: TurnId): MessageId => {
    const id = `msg_${messageCount}` as MessageId
    events.push(
      new MessageAppended(
        {
          message: new Message(
            {
              id,
              sessionId: SESSION_ID,
              turnId,
              role,
              status: "ok",
              visibility: role === "summary" ? "model_only" : "all",
              createdAt: messageCount,
            },
            UNCHECKED,
          ),
        },
        UNCHECKED,
      ),
      new PartAppended(
        {
          part: new Part(
            { id: `part_${messageCount}` as PartId, messageId: id, kind: "text", text: text() },
            UNCHECKED,
          ),
        },
        UNCHECKED,
      ),
    )
    messageCount++
    roles.set(id, role)
    active.push(id)
    lastInStream = id
    return id
  }

  const rewind = () => {
    // The user message of the second-to-last turn on the branch: cut the last two turns.
    let usersSeen = 0
    let position = -1
    for (let i = active.length - 1; i >= 0; i--) {
      if (roles.get(active[i]!) === "user" && ++usersSeen === 2) {
        position = i
        break
      }
    }
    if (position < 0) return
    const kept = active.slice(0, position)
    generation++
    events.push(
      new ConversationRewound(
        {
          cursor: {
            keptMessageIds: kept,
            branchCutAfterMessageId: lastInStream,
            branchGeneration: generation,
            targetMessageId: active[position]!,
            scope: "conversation",
          },
          requestedMessageId: active[position]!,
        },
        UNCHECKED,
      ),
    )
    active.length = position
    compactedUpTo = Math.min(compactedUpTo, active.length)
    rewindsDone++
  }

  while (messageCount < spec.messages) {
    const turnId = `turn_${turnCount++}` as TurnId
    const user = message("user", turnId)
    events.push(new TurnStarted({ turnId, userMessageId: user }, UNCHECKED))
    if (turnCount % checkpointEvery === 0) {
      checkpoints++
      events.push(
        new CheckpointCreated({
          checkpoint: decodeCheckpoint({
            checkpointId: `cp_${checkpoints}`,
            turnId,
            anchorMessageId: user,
            toolName: "Edit",
            path: `src/module_${checkpoints % 500}.ts`,
            before: { _tag: "present", hash: "a".repeat(64) },
            after: { _tag: "present", hash: "b".repeat(64) },
            linesAdded: rng.int(1, 40),
            linesRemoved: rng.int(0, 20),
          }),
        }),
      )
    }
    if (messageCount < spec.messages) message("assistant", turnId)
    events.push(new TurnCompleted({ turnId, status: "completed" }, UNCHECKED))

    if (
      messageCount < spec.messages &&
      messageCount % compactionEvery < 2 &&
      active.length - compactedUpTo > 40
    ) {
      // Summarise the branch from the last compaction up to ten messages before its end.
      const from = active[compactedUpTo]!
      const to = active[active.length - 11]!
      const summary = message("summary", turnId)
      events.push(new CompactionApplied({ summaryMessageId: summary, fromMessageId: from, toMessageId: to }))
      compactedUpTo = active.length
      compactions++
    }
    if (rewindsDone < spec.rewinds && messageCount >= (rewindsDone + 1) * rewindEvery) rewind()
  }

  // Ten turns back from the end of the branch: checkpoints are recorded every few turns after it.
  let usersSeen = 0
  let rewindTarget: MessageId | undefined
  for (let i = active.length - 1; i >= 0; i--) {
    if (roles.get(active[i]!) === "user" && ++usersSeen === Math.max(2, checkpointEvery)) {
      rewindTarget = active[i]!
      break
    }
  }
  if (rewindTarget === undefined) throw new Error("synthetic session too short to have a rewind target")

  return {
    sessionId: SESSION_ID,
    events: events.map((event, i) => ({ sessionId: SESSION_ID, sequence: i + 1, at: i, event })),
    messageCount,
    rewinds: rewindsDone,
    checkpoints,
    compactions,
    expectedActive: active,
    rewindTarget,
  }
}
