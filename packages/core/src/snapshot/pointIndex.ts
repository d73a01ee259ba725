/**
 * The point index of a session: its PointCaptured events (and write intents), projected from the
 * session stream with the rest of its state, so a cached state answers without reading the
 * stream again. Keeping the index in the stream (rather than a separate table) means a point is
 * committed atomically with the session's history, found again after a restart, and copied with
 * the history a fork copies, with no second store to keep in step.
 */

import { createHash } from "node:crypto"
import type { PointCaptured, PointId, SessionId, TurnId, WriteIntentDeclared } from "@rewind/contracts"
import { Effect } from "effect"
import { loadSession } from "../session/loadSession.js"
import { emptySessionState } from "../session/sessionState.js"

/**
 * A point's id is derived from (session, turn) so capture is idempotent: a second capture for the
 * same turn (after a restart, or a racing caller) finds the first. A fork's own points carry the
 * fork's session id, so equal turn numbers in parent and child never collide.
 */
export const pointIdFor = (sessionId: SessionId, turnId: TurnId, kind: "turn" | "rescue" = "turn"): PointId =>
  `pt-${kind === "turn" ? "" : "r"}${createHash("sha256").update(`${sessionId}\u0000${turnId}`).digest("hex").slice(0, 40)}` as PointId

export interface PointIndex {
  /** Every point of the session's stream, in order (inherited ones included). */
  readonly points: ReadonlyArray<PointCaptured>
  readonly writeIntents: ReadonlyArray<WriteIntentDeclared>
}

export const readPointIndex = (sessionId: SessionId) =>
  Effect.map(
    // A session with no events has no points (rather than a refusal: callers ask about points).
    Effect.catchIf(
      loadSession(sessionId),
      (e) => e._tag === "Refused" && e.kind === "session_not_found",
      () => Effect.succeed(emptySessionState),
    ),
    (state): PointIndex => ({ points: state.points, writeIntents: state.writeIntents }),
  )

/** The latest full (turn) point: the base the next capture starts from. */
export const latestTurnPoint = (index: PointIndex): PointCaptured | undefined =>
  index.points.findLast((p) => p.kind === "turn")
