/**
 * The versioned event union of a session stream, and its wire codec.
 *
 * Every event has a `_tag` and a schema version. The codec writes `{ type, version, payload }`
 * and, on read, refuses an unknown type or a version newer than this build knows instead of
 * guessing: a store written by a newer Rewind must never be misread by an older one.
 */
import { Effect, Either, ParseResult, Schema } from "effect"
import { Checkpoint } from "./checkpoint.js"
import { EventDecodeError } from "./errors.js"
import {
  ExecutionStateRecorded,
  ForkBoundaryPinned,
  GoalUpdated,
  ModelSelectionRecorded,
  SessionForked,
  SubagentSpawned,
  VerificationRecorded,
} from "./forkEvents.js"
import { GraphCheckpointRecorded, GraphThreadDeleted, GraphWritesRecorded } from "./graphCheckpoint.js"
import { CheckpointId, MessageId, OperationId, type SessionId, TaskId, TurnId } from "./ids.js"
import { compilePlain, INVALID } from "./internal/plainCodec.js"
import { WorkspaceAssigned } from "./isolatedWorkspace.js"
import { Message, Part } from "./message.js"
import { PointCaptured, PointRestored, WriteIntentDeclared } from "./points.js"
import { RedoApplied } from "./redo.js"
import { RevertCursor, RewindScope } from "./rewind.js"
import { Session } from "./session.js"
import { WorkspacePath } from "./workspacePath.js"

export class SessionCreated extends Schema.TaggedClass<SessionCreated>()("SessionCreated", {
  session: Session,
}) {}

export class MessageAppended extends Schema.TaggedClass<MessageAppended>()("MessageAppended", {
  message: Message,
}) {}

export class PartAppended extends Schema.TaggedClass<PartAppended>()("PartAppended", {
  part: Part,
}) {}

export class TurnStarted extends Schema.TaggedClass<TurnStarted>()("TurnStarted", {
  turnId: TurnId,
  userMessageId: MessageId,
}) {}

export class TurnCompleted extends Schema.TaggedClass<TurnCompleted>()("TurnCompleted", {
  turnId: TurnId,
  status: Schema.Literal("completed", "aborted"),
}) {}

/** The conversation was wound back: the cursor replaces the previous one wholesale. */
export class ConversationRewound extends Schema.TaggedClass<ConversationRewound>()("ConversationRewound", {
  cursor: RevertCursor,
  /** The id the caller asked for (an assistant id is resolved to its turn's user message). */
  requestedMessageId: MessageId,
}) {}

/** A summary message covers the contiguous active-branch range `fromMessageId..toMessageId`. */
export class CompactionApplied extends Schema.TaggedClass<CompactionApplied>()("CompactionApplied", {
  summaryMessageId: MessageId,
  fromMessageId: MessageId,
  toMessageId: MessageId,
}) {}

export class BackgroundTaskStarted extends Schema.TaggedClass<BackgroundTaskStarted>()(
  "BackgroundTaskStarted",
  {
    taskId: TaskId,
    turnId: TurnId,
    description: Schema.String,
    /** The branch generation the task was started on; results of an older generation are discarded. */
    branchGeneration: Schema.Number.pipe(Schema.int(), Schema.nonNegative()),
  },
) {}

export class BackgroundTaskFinished extends Schema.TaggedClass<BackgroundTaskFinished>()(
  "BackgroundTaskFinished",
  {
    taskId: TaskId,
    outcome: Schema.Literal("completed", "failed", "stopped"),
  },
) {}

export class CheckpointCreated extends Schema.TaggedClass<CheckpointCreated>()("CheckpointCreated", {
  checkpoint: Checkpoint,
}) {}

/** A preview-then-apply file rewind succeeded: the undo offer for these checkpoints is spent. */
export class FileRewindApplied extends Schema.TaggedClass<FileRewindApplied>()("FileRewindApplied", {
  operationId: OperationId,
  checkpointIds: Schema.Array(CheckpointId),
  files: Schema.Array(
    Schema.Struct({ path: WorkspacePath, action: Schema.Literal("restored", "deleted", "unchanged") }),
  ),
}) {}

/** A direct or cascade restore of files from checkpoints (the files part of a rewind). */
export class WorkspaceRewound extends Schema.TaggedClass<WorkspaceRewound>()("WorkspaceRewound", {
  operationId: OperationId,
  scope: RewindScope,
  targetMessageId: Schema.optional(MessageId),
  checkpointIds: Schema.Array(CheckpointId),
  outcome: Schema.Literal("applied", "unavailable"),
  reason: Schema.optional(Schema.String),
  files: Schema.Array(
    Schema.Struct({ path: WorkspacePath, action: Schema.Literal("restored", "deleted", "unchanged") }),
  ),
}) {}

/**
 * Every event class this build understands, with the schema version it writes. When a payload
 * changes shape, bump its version here and teach `decodeEvent` to upgrade the older one.
 */
export const EVENT_VERSIONS = {
  SessionCreated: { schema: SessionCreated, version: 1 },
  MessageAppended: { schema: MessageAppended, version: 1 },
  PartAppended: { schema: PartAppended, version: 1 },
  TurnStarted: { schema: TurnStarted, version: 1 },
  TurnCompleted: { schema: TurnCompleted, version: 1 },
  ConversationRewound: { schema: ConversationRewound, version: 1 },
  CompactionApplied: { schema: CompactionApplied, version: 1 },
  BackgroundTaskStarted: { schema: BackgroundTaskStarted, version: 1 },
  BackgroundTaskFinished: { schema: BackgroundTaskFinished, version: 1 },
  CheckpointCreated: { schema: CheckpointCreated, version: 1 },
  FileRewindApplied: { schema: FileRewindApplied, version: 1 },
  WorkspaceRewound: { schema: WorkspaceRewound, version: 1 },
  ForkBoundaryPinned: { schema: ForkBoundaryPinned, version: 1 },
  SessionForked: { schema: SessionForked, version: 1 },
  GoalUpdated: { schema: GoalUpdated, version: 1 },
  VerificationRecorded: { schema: VerificationRecorded, version: 1 },
  ModelSelectionRecorded: { schema: ModelSelectionRecorded, version: 1 },
  ExecutionStateRecorded: { schema: ExecutionStateRecorded, version: 1 },
  SubagentSpawned: { schema: SubagentSpawned, version: 1 },
  RedoApplied: { schema: RedoApplied, version: 1 },
  PointCaptured: { schema: PointCaptured, version: 1 },
  WriteIntentDeclared: { schema: WriteIntentDeclared, version: 1 },
  PointRestored: { schema: PointRestored, version: 1 },
  GraphCheckpointRecorded: { schema: GraphCheckpointRecorded, version: 1 },
  GraphWritesRecorded: { schema: GraphWritesRecorded, version: 1 },
  GraphThreadDeleted: { schema: GraphThreadDeleted, version: 1 },
  WorkspaceAssigned: { schema: WorkspaceAssigned, version: 1 },
} as const

export type EventType = keyof typeof EVENT_VERSIONS

export const SessionEvent = Schema.Union(
  SessionCreated,
  MessageAppended,
  PartAppended,
  TurnStarted,
  TurnCompleted,
  ConversationRewound,
  CompactionApplied,
  BackgroundTaskStarted,
  BackgroundTaskFinished,
  CheckpointCreated,
  FileRewindApplied,
  WorkspaceRewound,
  ForkBoundaryPinned,
  SessionForked,
  GoalUpdated,
  VerificationRecorded,
  ModelSelectionRecorded,
  ExecutionStateRecorded,
  SubagentSpawned,
  RedoApplied,
  PointCaptured,
  WriteIntentDeclared,
  PointRestored,
  GraphCheckpointRecorded,
  GraphWritesRecorded,
  GraphThreadDeleted,
  WorkspaceAssigned,
)
export type SessionEvent = typeof SessionEvent.Type

/** An event as a store keeps it: its place in the stream and when it was appended. */
export interface StoredEvent {
  readonly sessionId: SessionId
  /** 1-based position in the session's stream; the stream's version is its last sequence. */
  readonly sequence: number
  readonly at: number
  readonly event: SessionEvent
}

/** The wire/storage form of an event. `payload` is plain JSON. */
export interface EncodedEvent {
  readonly type: string
  readonly version: number
  readonly payload: unknown
}

const isKnownType = (type: string): type is EventType => Object.hasOwn(EVENT_VERSIONS, type)

/** Encodes an event for storage: JSON-safe payload plus its type and schema version. */
export const encodeEvent = (event: SessionEvent): EncodedEvent => ({
  type: event._tag,
  version: EVENT_VERSIONS[event._tag].version,
  payload: encoderOf(event._tag)(event),
})

// Decoding goes through plain-struct mirrors of the event classes: the same fields and checks, but
// no class construction per value, which makes a cold load of a long stream several times faster.
// The result has exactly the classes' shape (they carry no methods), so it is typed as the union.
const mirrorField = (field: unknown): unknown =>
  Schema.isSchema(field) && "fields" in field && typeof field.fields === "object" && field.fields !== null
    ? Schema.Struct(field.fields as Schema.Struct.Fields)
    : field

const mirrorOf = (schema: { readonly fields: Schema.Struct.Fields }) =>
  Schema.Struct(
    Object.fromEntries(
      Object.entries(schema.fields).map(([k, v]) => [k, mirrorField(v)]),
    ) as Schema.Struct.Fields,
  )

// The decoded plain values get their classes' prototypes back, so a decoded event is the same kind
// of value a program constructs (instanceof holds) without paying for validation twice.
const classFieldsOf = (schema: { readonly fields: Schema.Struct.Fields }) =>
  Object.entries(schema.fields).flatMap(([key, field]) =>
    typeof field === "function" && Schema.isSchema(field) && "fields" in field
      ? [[key, (field as unknown as { prototype: object }).prototype] as const]
      : [],
  )

/**
 * `make(type)` built on a type's first use and kept: a process that reads or writes a few event
 * types (a command-line capture) does not build the codecs of all of them at start, which was a
 * tenth of such a process's fixed cost.
 */
const perType = <A>(make: (type: EventType) => A) => {
  const made = new Map<EventType, A>()
  return (type: EventType): A => {
    if (made.has(type)) return made.get(type) as A
    const value = make(type)
    made.set(type, value)
    return value
  }
}

// Events whose mirror is plain data (every event today) are checked by a compiled checker
// (`compilePlain`) instead of Effect's interpreter; a value it rejects goes through the schema codec
// so the error (or, for a value only the schema accepts, the result) is the schema's own.
const plainOf = perType((type) => compilePlain(mirrorOf(EVENT_VERSIONS[type].schema).ast))

const decoderOf = perType(
  (type): ((input: unknown) => Either.Either<SessionEvent, ParseResult.ParseError>) => {
    const entry = EVENT_VERSIONS[type]
    const decode = Schema.decodeUnknownEither(
      mirrorOf(entry.schema) as unknown as Schema.Schema<SessionEvent, unknown>,
    )
    const plain = plainOf(type)
    const eventPrototype = entry.schema.prototype as object
    const nested = classFieldsOf(entry.schema)
    const withPrototypes = (value: unknown) => {
      const record = value as Record<string, object>
      for (const [key, prototype] of nested) Object.setPrototypeOf(record[key], prototype)
      return Object.setPrototypeOf(value, eventPrototype) as SessionEvent
    }
    return (input) => {
      const checked = plain === undefined ? INVALID : plain(input)
      if (checked !== INVALID) return Either.right(withPrototypes(checked))
      return Either.map(decode(input), withPrototypes)
    }
  },
)

const encoderOf = perType((type): ((event: SessionEvent) => unknown) => {
  const encode = Schema.encodeSync(
    EVENT_VERSIONS[type].schema as unknown as Schema.Schema<SessionEvent, unknown>,
  )
  const plain = plainOf(type)
  return (event) => {
    const checked = plain === undefined ? INVALID : plain(event)
    return checked === INVALID ? encode(event) : checked
  }
})

/** The first field a schema refused and why, in one line: a full report of a large value runs to kilobytes. */
const firstProblem = (error: ParseResult.ParseError): string => {
  const [first, ...rest] = ParseResult.ArrayFormatter.formatErrorSync(error)
  if (first === undefined) return "it is invalid"
  const text = first.message.replace(/\s+/g, " ")
  const field = first.path.length === 0 ? "the payload" : `field ${first.path.join(".")}`
  return `${field}: ${text.length > 160 ? `${text.slice(0, 160)}…` : text}${rest.length > 0 ? ` (and ${rest.length} more problem(s))` : ""}`
}

const decodeToEither = (
  encoded: EncodedEvent,
  ownsPayload: boolean,
): Either.Either<SessionEvent, EventDecodeError> => {
  const { type, version, payload } = encoded
  if (typeof type !== "string" || !isKnownType(type)) {
    return Either.left(
      new EventDecodeError({
        reason: "unknown_type",
        type: String(type),
        version,
        message: `unknown event type '${String(type)}'`,
      }),
    )
  }
  const known = EVENT_VERSIONS[type].version
  if (!Number.isInteger(version) || version < 1) {
    return Either.left(
      new EventDecodeError({
        reason: "malformed",
        type,
        version,
        message: "event version must be a positive integer",
      }),
    )
  }
  if (version > known) {
    return Either.left(
      new EventDecodeError({
        reason: "unsupported_version",
        type,
        version,
        message: `event ${type} has version ${version}, but this build of Rewind understands up to version ${known}; upgrade Rewind to read this store`,
      }),
    )
  }
  if (payload === null || typeof payload !== "object" || Array.isArray(payload)) {
    return Either.left(
      new EventDecodeError({
        reason: "malformed",
        type,
        version,
        message: `event ${type} payload must be an object`,
      }),
    )
  }
  // An owned payload (just parsed from JSON, used by no one else) becomes the event itself; the
  // tag assignment leaves the same keys in the same order as the copy would.
  let input: Record<string, unknown>
  if (ownsPayload) {
    input = payload as Record<string, unknown>
    input._tag = type
  } else input = { ...payload, _tag: type }
  return Either.mapLeft(
    decoderOf(type)(input),
    (error) =>
      new EventDecodeError({
        reason: "malformed",
        type,
        version,
        message: `event ${type} v${version} does not match its schema: ${firstProblem(error)}`,
      }),
  )
}

/**
 * Decodes a stored event, refusing unknown types, versions newer than this build, and payloads
 * that do not match their schema. Never returns a partially understood event.
 */
export const decodeEvent = (encoded: EncodedEvent): Effect.Effect<SessionEvent, EventDecodeError> =>
  Effect.suspend(() => decodeToEither(encoded, false))

/** Synchronous variant for hot loops (cold loads); throws the same EventDecodeError. */
export const decodeEventSync = (encoded: EncodedEvent): SessionEvent => {
  const result = decodeToEither(encoded, false)
  if (Either.isLeft(result)) throw result.left
  return result.right
}

/**
 * `decodeEventSync` for a payload the caller owns outright (one it has just parsed from JSON and
 * keeps no other reference to): the payload object may become the decoded event, which spares a
 * copy of every event on a long read. Same checks, same result, same errors.
 */
export const decodeOwnedEventSync = (encoded: EncodedEvent): SessionEvent => {
  const result = decodeToEither(encoded, true)
  if (Either.isLeft(result)) throw result.left
  return result.right
}

/**
 * An instance of a schema class (an event, a Message, a Part) made from fields the caller already
 * holds as valid values: copies of decoded values and ids the engine minted. It is the class's
 * prototype over the fields, exactly what decoding makes, without running the constructor's
 * validation a second time; bulk builders (a fork bundle of tens of thousands of events) use it.
 * Nothing is trusted blindly at the store: encoding checks every event before it is written.
 */
export const trustedInstance = <C extends abstract new (...args: ReadonlyArray<never>) => object>(
  Class: C,
  fields: { readonly [K in keyof InstanceType<C>]: InstanceType<C>[K] },
): InstanceType<C> => Object.setPrototypeOf(fields, Class.prototype) as InstanceType<C>
