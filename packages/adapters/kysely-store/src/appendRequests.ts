/**
 * What happens to an append or commit request before any transaction starts: its time is checked,
 * its events are encoded (a bad event never holds a lock), and a commit naming a session twice is
 * refused. Also the expected-version check every write makes once it knows the stream's version.
 */
import { type SessionId, StoreError, VersionConflict } from "@rewind/contracts"
import type { AppendRequest } from "@rewind/core"
import { Effect } from "effect"
import { type EncodedRow, encodeRows } from "./eventRows.js"

export interface PreparedAppend {
  readonly request: AppendRequest
  readonly rows: ReadonlyArray<EncodedRow>
}

export const prepareAppend = (
  operation: string,
  request: AppendRequest,
): Effect.Effect<PreparedAppend, StoreError> =>
  Effect.try({
    try: () => {
      if (!Number.isSafeInteger(request.at) || request.at < 0) {
        throw new StoreError({
          operation,
          message: `append time must be a non-negative integer, got ${request.at}`,
        })
      }
      return { request, rows: encodeRows(request.events) }
    },
    catch: (error) =>
      error instanceof StoreError
        ? error
        : new StoreError({
            operation,
            message: `could not encode event: ${String(error)}`,
            cause: error,
          }),
  })

/** A commit writes each stream at most once: two appends to one stream would race each other. */
export const requireDistinctStreams = (
  appends: ReadonlyArray<AppendRequest>,
): Effect.Effect<void, StoreError> => {
  const seen = new Set<SessionId>()
  for (const a of appends) {
    if (seen.has(a.sessionId)) {
      return Effect.fail(
        new StoreError({
          operation: "commit",
          message: `session ${a.sessionId} appears twice in one commit`,
        }),
      )
    }
    seen.add(a.sessionId)
  }
  return Effect.void
}

/** Throws VersionConflict when the stream is not at the version the caller decided on. */
export const checkExpectedVersion = (request: AppendRequest, actual: number): void => {
  if (actual !== request.expectedVersion) {
    throw new VersionConflict({
      sessionId: request.sessionId,
      expectedVersion: request.expectedVersion,
      actualVersion: actual,
    })
  }
}
