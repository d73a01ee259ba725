/**
 * Events to rows and back. Encoding uses the contracts codec (`encodeEvent`) and JSON text;
 * decoding uses `decodeOwnedEventSync` (the parsed payload is the read's own), so a row of an unknown type, a newer version or a malformed
 * payload is an EventDecodeError, never a misread event.
 *
 * Payloads are JSON text rather than a JSON column type: `JSON.stringify` escapes NUL and lone
 * surrogates (`\u0000`, `\uD800`), so the text is valid in every database and every string of an
 * event comes back exactly (PostgreSQL's `jsonb` would refuse both).
 */
import {
  decodeOwnedEventSync,
  EventDecodeError,
  encodeEvent,
  type SessionEvent,
  type SessionId,
  type StoredEvent,
} from "@rewind/contracts"

export interface EncodedRow {
  readonly type: string
  readonly version: number
  readonly payload: string
  readonly event: SessionEvent
}

/** Throws when an event does not encode (it would not survive a round trip). */
export const encodeRows = (events: ReadonlyArray<SessionEvent>): Array<EncodedRow> =>
  events.map((event) => {
    const encoded = encodeEvent(event)
    return { type: encoded.type, version: encoded.version, payload: JSON.stringify(encoded.payload), event }
  })

/**
 * Throws EventDecodeError for a stored event this build cannot understand. `where` names the row in
 * the message; a function is called only for a row that fails (a long read builds no text per row).
 */
export const decodeStored = (
  type: string,
  version: number,
  payload: string,
  where: string | (() => string),
): SessionEvent => {
  let parsed: unknown
  try {
    parsed = JSON.parse(payload)
  } catch {
    throw new EventDecodeError({
      reason: "malformed",
      type,
      version,
      message: `event ${type} ${typeof where === "string" ? where : where()} is not valid JSON`,
    })
  }
  try {
    return decodeOwnedEventSync({ type, version, payload: parsed })
  } catch (error) {
    // Name the row, so the message says where the bad event is, not only what is wrong with it.
    if (!(error instanceof EventDecodeError)) throw error
    const at = typeof where === "string" ? where : where()
    throw new EventDecodeError({
      reason: error.reason,
      type: error.type,
      version: error.version,
      message: `${error.message} (the events row ${at})`,
    })
  }
}

/** A row as a raw-mode read returns it: sequence, type, version, payload, at. */
export type EventRowTuple = readonly [
  sequence: number,
  type: string,
  version: number,
  payload: string,
  at: number,
]

export const decodeRow = (sessionId: SessionId, row: EventRowTuple): StoredEvent => ({
  sessionId,
  sequence: row[0],
  at: row[4],
  event: decodeStored(row[1], row[2], row[3], () => `at sequence ${row[0]} of session ${sessionId}`),
})

/** A row of a stream read as an object (the columns of `events` a read selects). */
export interface EventRowObject {
  readonly sequence: number
  readonly type: string
  readonly version: number
  readonly payload: string
  readonly at: number
}

export const decodeRowObject = (sessionId: SessionId, row: EventRowObject): StoredEvent => ({
  sessionId,
  sequence: row.sequence,
  at: row.at,
  event: decodeStored(
    row.type,
    row.version,
    row.payload,
    () => `at sequence ${row.sequence} of session ${sessionId}`,
  ),
})
