/**
 * The SessionStore port: append-only event streams, one per session, with optimistic concurrency
 * (an expected version per append), atomic multi-stream commits and command facts for idempotent
 * commands. Adapters encode events with the contracts codec and must pass the testkit's
 * conformance suite.
 */
import type {
  CommandAlreadyRecorded,
  EventDecodeError,
  SessionEvent,
  SessionId,
  SessionKind,
  StoredEvent,
  StoreError,
  VersionConflict,
} from "@rewind/contracts"
import { Context, type Effect, type Option } from "effect"

export interface AppendRequest {
  readonly sessionId: SessionId
  /** The stream's version the caller decided on: 0 for a new stream. */
  readonly expectedVersion: number
  readonly events: ReadonlyArray<SessionEvent>
  /** Append time, from the Clock. */
  readonly at: number
}

/** The recorded result of a command, keyed by (session, command id), written once. */
export interface CommandFact {
  readonly sessionId: SessionId
  readonly commandId: string
  readonly result: unknown
  readonly at: number
}

export interface CommitRequest {
  readonly appends: ReadonlyArray<AppendRequest>
  readonly facts?: ReadonlyArray<CommandFact>
}

export interface SessionSummary {
  readonly sessionId: SessionId
  readonly kind: SessionKind
  readonly parentId: SessionId | undefined
  readonly title: string
  readonly createdAt: number
  readonly version: number
  readonly updatedAt: number
}

export interface SessionStoreService {
  /** Appends to one stream; fails with VersionConflict when the stream moved on. */
  readonly append: (
    request: AppendRequest,
  ) => Effect.Effect<{ readonly version: number }, VersionConflict | StoreError>
  /** Appends to several streams and writes command facts, all or nothing. */
  readonly commit: (
    request: CommitRequest,
  ) => Effect.Effect<void, VersionConflict | CommandAlreadyRecorded | StoreError>
  /** Events of one stream in order, starting after `afterSequence` (default 0: all). */
  readonly read: (
    sessionId: SessionId,
    options?: { readonly afterSequence?: number },
  ) => Effect.Effect<ReadonlyArray<StoredEvent>, StoreError | EventDecodeError>
  /** The stream's current version (0 when it does not exist). */
  readonly version: (sessionId: SessionId) => Effect.Effect<number, StoreError>
  readonly listSessions: () => Effect.Effect<ReadonlyArray<SessionSummary>, StoreError>
  readonly getCommandFact: (
    sessionId: SessionId,
    commandId: string,
  ) => Effect.Effect<Option.Option<CommandFact>, StoreError>
}

export class SessionStore extends Context.Tag("@rewind/core/SessionStore")<
  SessionStore,
  SessionStoreService
>() {}
