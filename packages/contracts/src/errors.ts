/**
 * Infrastructure failures as tagged errors. Expected outcomes (a target that is not a user
 * message, an unsafe file, a spent token) are refusals instead, see `refusal.ts`.
 */
import { Schema } from "effect"
import { ContentHash, SessionId } from "./ids.js"

/** A stored event could not be understood; the store is not misread, the read fails. */
export class EventDecodeError extends Schema.TaggedError<EventDecodeError>()("EventDecodeError", {
  reason: Schema.Literal("unknown_type", "unsupported_version", "malformed"),
  type: Schema.String,
  version: Schema.Unknown,
  message: Schema.String,
}) {}

/** An append's expected version did not match the stream: someone else appended first. */
export class VersionConflict extends Schema.TaggedError<VersionConflict>()("VersionConflict", {
  sessionId: SessionId,
  expectedVersion: Schema.Number,
  actualVersion: Schema.Number,
}) {
  override get message() {
    return `session ${this.sessionId} is at version ${this.actualVersion}, expected ${this.expectedVersion}`
  }
}

/** A command fact with this id already exists: the command ran before (idempotent replay). */
export class CommandAlreadyRecorded extends Schema.TaggedError<CommandAlreadyRecorded>()(
  "CommandAlreadyRecorded",
  {
    sessionId: SessionId,
    commandId: Schema.String,
    result: Schema.Unknown,
  },
) {
  override get message() {
    return `command ${this.commandId} was already recorded on session ${this.sessionId}`
  }
}

/** The storage layer failed (I/O, driver, constraint other than a version conflict). */
export class StoreError extends Schema.TaggedError<StoreError>()("StoreError", {
  operation: Schema.String,
  message: Schema.String,
  cause: Schema.optional(Schema.Defect),
}) {}

/** The store on disk was written by a newer Rewind, or is not a Rewind store at all. */
export class StoreIncompatible extends Schema.TaggedError<StoreIncompatible>()("StoreIncompatible", {
  reason: Schema.Literal("newer_version", "corrupt", "not_a_store"),
  location: Schema.String,
  message: Schema.String,
}) {}

/** A blob's bytes do not hash to its address: it is never returned as data. */
export class ArtifactCorrupt extends Schema.TaggedError<ArtifactCorrupt>()("ArtifactCorrupt", {
  hash: ContentHash,
  actualHash: Schema.String,
}) {
  override get message() {
    return `artifact ${this.hash} is corrupt (its content hashes to ${this.actualHash})`
  }
}

export class ArtifactNotFound extends Schema.TaggedError<ArtifactNotFound>()("ArtifactNotFound", {
  hash: ContentHash,
}) {
  override get message() {
    return `artifact ${this.hash} is not in the store`
  }
}

export class ArtifactStoreError extends Schema.TaggedError<ArtifactStoreError>()("ArtifactStoreError", {
  operation: Schema.String,
  message: Schema.String,
  cause: Schema.optional(Schema.Defect),
}) {}

/**
 * A path was refused before any filesystem call: outside the root, through a symlink, malformed,
 * longer than the system can name once rooted (`too_long`), under a symlink on the way when writing
 * (`symlink_in_path`: no write, create, rename or delete goes through a link, inside the root or
 * not), or protected by the one protection policy (`protected`: the store, `.git`, ignored paths).
 */
export class PathRefused extends Schema.TaggedError<PathRefused>()("PathRefused", {
  path: Schema.String,
  reason: Schema.Literal(
    "malformed",
    "outside_root",
    "symlink_escape",
    "symlink_loop",
    "not_a_regular_file",
    "symlink_in_path",
    "too_long",
    "protected",
  ),
  message: Schema.String,
}) {}

export class WorkspaceIoError extends Schema.TaggedError<WorkspaceIoError>()("WorkspaceIoError", {
  operation: Schema.Literal("read", "write", "delete", "stat", "scan", "readlink", "symlink", "chmod"),
  path: Schema.String,
  message: Schema.String,
  code: Schema.optional(Schema.String),
}) {}

/** A background task of a turn being cut refused to stop: the rewind must fail as a whole. */
export class TaskStopFailed extends Schema.TaggedError<TaskStopFailed>()("TaskStopFailed", {
  taskId: Schema.String,
  message: Schema.String,
}) {}

/**
 * A file rewind failed and so did the compensation that should have undone its partial writes.
 * Names every file and the state it was left in, so a person can finish the job by hand.
 */
export class UnrecoverableRewindError extends Schema.TaggedError<UnrecoverableRewindError>()(
  "UnrecoverableRewindError",
  {
    operationId: Schema.String,
    files: Schema.Array(
      Schema.Struct({
        path: Schema.String,
        state: Schema.Literal("restored", "rewound", "unknown", "untouched"),
        detail: Schema.optional(Schema.String),
      }),
    ),
    message: Schema.String,
  },
) {}

/**
 * A fork bundle about to be committed has a reference that does not point inside the child (or
 * another shape problem): a bug in the bundle builder, never committed. Lists every problem found.
 */
export class ForkBundleInvalid extends Schema.TaggedError<ForkBundleInvalid>()("ForkBundleInvalid", {
  sessionId: SessionId,
  problems: Schema.Array(Schema.String),
}) {
  override get message() {
    return `fork bundle for session ${this.sessionId} is invalid: ${this.problems.join("; ")}`
  }
}

/**
 * A failure in words, for a message that quotes what went wrong: the failure's own `message` when
 * it has one (any tagged error, an Error, a plain object carrying one), else its string form. The
 * one definition every package uses. It never throws: a value whose inspection throws (a hostile
 * Proxy or getter) is described as such instead.
 */
export const describeError = (error: unknown): string => {
  try {
    return typeof error === "object" && error !== null && "message" in error
      ? String(error.message)
      : String(error)
  } catch {
    return "a value that could not be described"
  }
}
