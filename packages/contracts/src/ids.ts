/**
 * Branded identifiers. Every id that crosses a boundary (store rows, CLI arguments, wire JSON) is
 * validated against one conservative alphabet so a crafted id can never smuggle a path separator,
 * NUL byte or control character into a file name or a log line.
 */
import { Schema } from "effect"

/** Letters, digits and `._:-`, starting with a letter or digit, at most 200 characters. */
export const ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,199}$/

const idOf = <const B extends string>(brand: B) =>
  Schema.String.pipe(
    Schema.pattern(ID_PATTERN, {
      message: () =>
        `a ${brand} is 1-200 characters of letters, digits and . _ : - (starting with a letter or digit)`,
    }),
    Schema.brand(brand),
  )

export const SessionId = idOf("SessionId")
export type SessionId = typeof SessionId.Type
export const MessageId = idOf("MessageId")
export type MessageId = typeof MessageId.Type
export const PartId = idOf("PartId")
export type PartId = typeof PartId.Type
export const TurnId = idOf("TurnId")
export type TurnId = typeof TurnId.Type
export const TaskId = idOf("TaskId")
export type TaskId = typeof TaskId.Type
export const CheckpointId = idOf("CheckpointId")
export type CheckpointId = typeof CheckpointId.Type
export const PointId = idOf("PointId")
export type PointId = typeof PointId.Type
export const CommandId = idOf("CommandId")
export type CommandId = typeof CommandId.Type
export const OperationId = idOf("OperationId")
export type OperationId = typeof OperationId.Type
export const GoalId = idOf("GoalId")
export type GoalId = typeof GoalId.Type
export const VerificationId = idOf("VerificationId")
export type VerificationId = typeof VerificationId.Type
export const TraceId = idOf("TraceId")
export type TraceId = typeof TraceId.Type

/**
 * What a content address looks like, the one definition: the schema below and the adapters' fast
 * checks (`isContentHash` in core's ArtifactStore port) both test this pattern.
 */
export const CONTENT_HASH_PATTERN: RegExp = /^[0-9a-f]{64}$/

/** A lowercase hex SHA-256 digest: the address of a blob in the artifact store. */
export const ContentHash = Schema.String.pipe(
  Schema.pattern(CONTENT_HASH_PATTERN, {
    message: () => "a content hash is 64 lowercase hex digits (SHA-256)",
  }),
  Schema.brand("ContentHash"),
)
export type ContentHash = typeof ContentHash.Type

/** Milliseconds since the epoch, as read from Effect's Clock (the test clock in tests). */
export const Timestamp = Schema.Number.pipe(Schema.int(), Schema.nonNegative())
export type Timestamp = typeof Timestamp.Type
