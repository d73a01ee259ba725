/**
 * The state of a session's tree at a fork boundary, as the store knows it: what an isolated fork
 * materialises. It is the newest turn point captured before the boundary (in stream order, any
 * branch), with every checkpoint recorded after that point and before the boundary laid over it
 * (its after-version; a deletion removes the path). Pure, over the stream.
 *
 * Boundaries: the end of a message's turn (a fork at a reply, or from a checkpoint at a message),
 * just before a checkpoint (a fork from that checkpoint: the tree as it stood when the agent was
 * about to make it), or just before a user message (rewind by fork). A boundary with no point
 * before it has no known tree, and a restore (a rewind, a point restore, a redo) between the point
 * and the boundary changed files in a way the stream does not spell out: both refuse rather than
 * guess, naming what to do.
 */
import type {
  CheckpointId,
  ContentHash,
  MessageId,
  PointCaptured,
  RefusalKind,
  StoredEvent,
  WorkspacePath,
} from "@rewind/contracts"

/** Where the tree state is taken: before the event at `index` of the stream. */
export type ForkBoundaryAt =
  | { readonly after: "turn_end"; readonly messageId: MessageId }
  | { readonly before: "checkpoint"; readonly checkpointId: CheckpointId }
  | { readonly before: "message"; readonly messageId: MessageId }

/** A path of the base tree; a file's size is learnt when its content is read. */
export type BaseEntry =
  | { readonly kind: "file"; readonly hash: ContentHash; readonly mode: number }
  | { readonly kind: "link"; readonly target: string }

export type ForkBasePlan =
  | {
      readonly ok: true
      readonly point: PointCaptured
      /** Checkpoint versions laid over the point's manifest: path → entry, or null for deleted. */
      readonly overlay: ReadonlyMap<WorkspacePath, BaseEntry | null>
      /** How many of the source's events the base covers: orders two forks' bases in its history. */
      readonly boundary: number
    }
  | { readonly ok: false; readonly kind: RefusalKind; readonly message: string }

const DEFAULT_MODE = 0o644

/** The stream index the boundary lies before (events at smaller indices are in the base). */
const boundaryIndex = (events: ReadonlyArray<StoredEvent>, at: ForkBoundaryAt): number | undefined => {
  if ("before" in at && at.before === "checkpoint") {
    const i = events.findIndex(
      (e) => e.event._tag === "CheckpointCreated" && e.event.checkpoint.checkpointId === at.checkpointId,
    )
    return i < 0 ? undefined : i
  }
  const m = events.findIndex((e) => e.event._tag === "MessageAppended" && e.event.message.id === at.messageId)
  if (m < 0) return undefined
  if ("before" in at) return m
  const event = events[m]!.event
  const turnId = event._tag === "MessageAppended" ? event.message.turnId : undefined
  const end = events.findIndex(
    (e, i) => i > m && e.event._tag === "TurnCompleted" && e.event.turnId === turnId,
  )
  // A turn not completed yet ends (for now) at its last event so far.
  return end < 0 ? events.length : end + 1
}

export const planForkBase = (events: ReadonlyArray<StoredEvent>, at: ForkBoundaryAt): ForkBasePlan => {
  const end = boundaryIndex(events, at)
  if (end === undefined) {
    return { ok: false, kind: "not_found", message: "the fork boundary is not in this session's stream" }
  }
  let pointAt = -1
  for (let i = end - 1; i >= 0; i--) {
    const e = events[i]!.event
    if (e._tag === "PointCaptured" && e.kind === "turn") {
      pointAt = i
      break
    }
  }
  if (pointAt < 0) {
    return {
      ok: false,
      kind: "unavailable",
      message:
        "no point was captured before the fork boundary, so the tree at that moment is not known; an isolated fork is made from a point (capture one with `rewind capture`, then fork at a later turn, or fork with a shared workspace)",
    }
  }
  const overlay = new Map<WorkspacePath, BaseEntry | null>()
  for (let i = pointAt + 1; i < end; i++) {
    const e = events[i]!.event
    if (e._tag === "CheckpointCreated") {
      const { path, after } = e.checkpoint
      if (after === undefined) {
        return {
          ok: false,
          kind: "unavailable",
          message: `checkpoint ${e.checkpoint.checkpointId} of ${path} has no after-content, so the tree at the fork boundary is not known exactly; capture a point and fork at a later turn`,
        }
      }
      overlay.set(
        path,
        after._tag === "present"
          ? { kind: "file", hash: after.hash, mode: after.mode ?? DEFAULT_MODE }
          : null,
      )
    } else if (
      e._tag === "WorkspaceRewound" ||
      e._tag === "FileRewindApplied" ||
      e._tag === "PointRestored" ||
      e._tag === "RedoApplied"
    ) {
      return {
        ok: false,
        kind: "unavailable",
        message: `a restore (${e._tag}) changed the tree after the last point before the fork boundary, so the tree at the boundary is not known exactly; capture a point and fork at a later turn, or fork with a shared workspace`,
      }
    }
  }
  return { ok: true, point: events[pointAt]!.event as PointCaptured, overlay, boundary: end }
}
