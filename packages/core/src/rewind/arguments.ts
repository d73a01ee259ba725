/**
 * The door of every `Rewind` operation: one Schema per argument (moved here from the facade, so
 * every host surface shares it), and the check every call goes through before anything runs
 * (`decodeArguments`, in `argumentDecoding.ts`, re-exported here). A host in plain JavaScript
 * can pass anything (a symbol for an id, `null` for an input object, a string where a list
 * belongs); such a call answers `invalid_input` naming the argument and the field, and the engine
 * never sees the value.
 *
 * Invariants:
 * - nothing is defaulted silently: an out-of-range number, an unknown capture setting or a
 *   `declaredPaths` that is not a list is refused, never replaced by a default;
 * - nothing is trimmed; host paths are normalised by `WorkspacePathFromHost` only (`./a` → `a`);
 * - the check itself never throws: a hostile object (a throwing getter, a Proxy) is refused too;
 * - the values handed on are the decoded ones (unknown keys of input objects dropped).
 */
import {
  CheckpointId,
  ContentHash,
  GoalId,
  GoalStatus,
  MessageId,
  MessageStatus,
  PartKind,
  RunId,
  SessionId,
  SessionKind,
  TraceId,
  TurnId,
  VerificationId,
  VerificationOutcome,
  Visibility,
  WorkspacePathFromHost,
} from "@rewind/contracts"
import { Schema } from "effect"
import { ExpectedAfter } from "../files/expectedAfter.js"

export { decodeArguments, type OperationArgument } from "./argumentDecoding.js"

/** JSON data (a part's `data`) nested deeper than this is refused rather than walked. */
const MAX_DATA_DEPTH = 256

/** Plain JSON data, checked without recursion so a deeply nested value cannot overflow the stack. */
const isJsonData = (value: unknown): boolean => {
  const stack: Array<{ readonly value: unknown; readonly depth: number }> = [{ value, depth: 0 }]
  const seen = new Set<object>()
  while (stack.length > 0) {
    const { value: v, depth } = stack.pop()!
    if (v === null || typeof v === "string" || typeof v === "boolean") continue
    if (typeof v === "number") {
      if (!Number.isFinite(v)) return false
      continue
    }
    if (typeof v !== "object" || depth >= MAX_DATA_DEPTH || seen.has(v)) return false
    seen.add(v)
    if (Array.isArray(v)) {
      for (const item of v) stack.push({ value: item, depth: depth + 1 })
      continue
    }
    const proto = Object.getPrototypeOf(v)
    if (proto !== Object.prototype && proto !== null) return false
    if (Object.getOwnPropertySymbols(v).length > 0) return false
    for (const item of Object.values(v)) stack.push({ value: item, depth: depth + 1 })
  }
  return true
}

// The `arbitrary` annotations let tests generate valid values from these Schemas (the fuzz target).
const JsonData = Schema.declare((u): u is unknown => isJsonData(u), {
  identifier: "JsonData",
  message: () =>
    `plain JSON data (null, booleans, strings, finite numbers, arrays and plain objects, nested at most ${MAX_DATA_DEPTH} deep, no cycles)`,
  arbitrary: () => (fc) => fc.jsonValue({ maxDepth: 3 }),
  // Any JSON value is valid here, so a schema document (`rewind serve --schema`) says so instead of
  // leaving out every argument that carries host data.
  jsonSchema: {
    type: ["null", "boolean", "number", "string", "array", "object"],
    description: "any JSON value (plain data, no cycles)",
  },
})

const AFunction = Schema.declare(
  (u): u is (...args: ReadonlyArray<never>) => unknown => typeof u === "function",
  {
    identifier: "Function",
    message: () => "a function",
    arbitrary: () => (fc) => fc.constant(() => undefined),
  },
)

/** Optional fields are either absent or valid; `undefined` given for a setting is not "use the default". */
const exact = <S extends Schema.Schema.Any>(schema: S) => Schema.optionalWith(schema, { exact: true })

const NonNegativeInt = Schema.Number.pipe(Schema.int(), Schema.nonNegative())
const PositiveInt = Schema.Number.pipe(Schema.int(), Schema.positive())
/** A file mode: permission bits and setuid/setgid/sticky, nothing wider. */
const FileMode = Schema.Number.pipe(
  Schema.int(),
  Schema.between(0, 0o7777, { message: () => "a file mode is an integer from 0 to 0o7777" }),
)
const Content = Schema.Union(Schema.Uint8ArrayFromSelf, Schema.String, Schema.Null)
/** Keys a caller may not misspell: an unknown key there would silently leave a default in force. */
const strict = { parseOptions: { onExcessProperty: "error" } } as const

export const CaptureSettings = Schema.Struct({
  maxFileBytes: exact(NonNegativeInt),
  maxFiles: exact(PositiveInt),
  timeBudgetMs: exact(PositiveInt),
  racyWindowMs: exact(NonNegativeInt),
}).annotations(strict)

export const CaptureOptions = Schema.UndefinedOr(
  Schema.Struct({
    settings: exact(CaptureSettings),
    declaredPaths: exact(Schema.Array(WorkspacePathFromHost)),
    onProgress: exact(AFunction),
  }),
)

export const CleanupOptions = Schema.UndefinedOr(
  Schema.Struct({
    graceMs: exact(NonNegativeInt),
    retention: exact(
      Schema.Struct({ keepLastPoints: exact(NonNegativeInt), byteBudget: exact(NonNegativeInt) }).annotations(
        strict,
      ),
    ),
    extraRoots: exact(Schema.Array(ContentHash)),
  }),
)

export const DoctorOptions = Schema.UndefinedOr(
  Schema.Struct({
    repair: exact(Schema.Boolean),
    tempGraceMs: exact(NonNegativeInt),
    onProgress: exact(AFunction),
  }),
)

/**
 * The most entries one `sessionHistory` window answers. A window is for paging (the UI asks 200 at
 * a time); 1,000 entries are a few hundred KB of JSON, while an unbounded `limit` would let one
 * request build the whole stream's answer. The whole history is still one call away: no window.
 */
export const MAX_HISTORY_WINDOW = 1000

/**
 * A window of a session's history: `limit` entries (1 to MAX_HISTORY_WINDOW) from `offset`
 * (default 0; past the end answers no entries); any other key is refused.
 */
export const HistoryWindow = Schema.UndefinedOr(
  Schema.Struct({
    offset: exact(NonNegativeInt),
    limit: PositiveInt.pipe(
      Schema.lessThanOrEqualTo(MAX_HISTORY_WINDOW, {
        message: () => `a history window is at most ${MAX_HISTORY_WINDOW} entries (omit the window for all)`,
      }),
    ),
  }).annotations(strict),
)

export const PointDiffOptions = Schema.UndefinedOr(
  Schema.Struct({
    patches: exact(Schema.Boolean),
    maxPatchBytes: exact(NonNegativeInt),
  }),
)

export const CreateSessionInput = Schema.Struct({
  sessionId: Schema.optional(SessionId),
  title: Schema.String,
  cwd: Schema.String,
  kind: Schema.optional(SessionKind),
  parentId: Schema.optional(SessionId),
  rootTraceId: Schema.optional(TraceId),
})

export const UserMessageInput = Schema.Struct({
  text: Schema.String,
  messageId: Schema.optional(MessageId),
  turnId: Schema.optional(TurnId),
  visibility: Schema.optional(Visibility),
})

export const PartInput = Schema.Struct({
  kind: PartKind,
  text: Schema.optional(Schema.String),
  toolName: Schema.optional(Schema.String),
  data: Schema.optional(JsonData),
})

export const ReplyInput = Schema.Struct({
  turnId: TurnId,
  role: Schema.optional(Schema.Literal("assistant", "system")),
  parts: Schema.Array(PartInput),
  status: Schema.optional(MessageStatus),
  visibility: Schema.optional(Visibility),
  messageId: Schema.optional(MessageId),
})

export const CompactionInput = Schema.Struct({
  fromMessageId: MessageId,
  toMessageId: MessageId,
  summaryText: Schema.String,
  turnId: Schema.optional(TurnId),
})

export const FileMutationInput = Schema.Struct({
  sessionId: SessionId,
  turnId: TurnId,
  path: WorkspacePathFromHost,
  toolName: Schema.String.pipe(Schema.minLength(1, { message: () => "a tool name must not be empty" })),
  before: Content,
  after: Content,
  toolMessageId: Schema.optional(MessageId),
  beforeMode: Schema.optional(FileMode),
  afterMode: Schema.optional(FileMode),
})

export const CheckpointFromIntentInput = Schema.Struct({
  sessionId: SessionId,
  turnId: TurnId,
  intentId: TurnId,
  path: WorkspacePathFromHost,
  toolName: Schema.String.pipe(Schema.minLength(1, { message: () => "a tool name must not be empty" })),
  /** What the tool says the file now holds: lets the read skip the settle wait when it matches. */
  expected: Schema.optional(ExpectedAfter),
})

export const FileRewindTarget = Schema.Union(
  Schema.Struct({ sessionId: SessionId, messageId: MessageId }),
  Schema.Struct({ sessionId: SessionId, turnId: TurnId }),
)

export const ForkRestoreTarget = Schema.Union(
  Schema.Struct({ checkpointId: CheckpointId }),
  Schema.Struct({ latest: Schema.Literal(true) }),
  Schema.Struct({ messageId: MessageId }),
)

export const TurnEnd = Schema.UndefinedOr(Schema.Literal("completed", "aborted"))
export const Token = Schema.String

export const GoalInput = Schema.Struct({
  goalId: Schema.optional(GoalId),
  text: Schema.optional(Schema.String),
  status: Schema.optional(GoalStatus),
  tokensUsed: Schema.optional(NonNegativeInt),
  liveRun: Schema.optional(Schema.NullOr(Schema.Struct({ runId: RunId, turnId: TurnId }))),
})

export const VerificationInput = Schema.Struct({
  messageId: MessageId,
  outcome: VerificationOutcome,
  summary: Schema.String,
  goalId: Schema.optional(GoalId),
  verificationId: Schema.optional(VerificationId),
})

export const TaskOutcome = Schema.Literal("completed", "failed")
