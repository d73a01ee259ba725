/**
 * Restoring the workspace to a point, the preview half. `previewPointRestore` lists the writes,
 * links and deletes a restore would make and the conflicts that forbid it (the plan:
 * `pointRestorePlan.ts`), and, without conflicts, issues a preview token bound to the point and a
 * digest of the plan. Writes nothing. `applyPointRestore.ts` redeems the token.
 */
import type { PointId, ProtectedPath, SessionId, SkippedPath } from "@rewind/contracts"
import { Effect } from "effect"
import { issuePreviewToken } from "../restore/previewTokens.js"
import { type PlannedChange, planPointRestore, type RestoreConflict } from "./pointRestorePlan.js"

export type { CurrentState } from "./pointInspection.js"
export type { PlannedChange, RestoreConflict } from "./pointRestorePlan.js"

export interface PointRestorePreview {
  readonly pointId: PointId
  /**
   * Paths of the point the protection policy keeps (the store, `.git`, paths the ignore rules
   * exclude now) from a change the restore would make: left alone, never written or deleted, and
   * not a conflict. A path that holds the point's state already is counted in `unchanged` instead.
   */
  readonly protected: ReadonlyArray<ProtectedPath>
  /**
   * What the point's capture left out (its `skipped`: a nested repository, a file over the size
   * limit, what the scan's budget did not reach, an unreadable path...): the point holds nothing
   * of it, so the restore leaves it as it is, whatever it holds now.
   */
  readonly leftOut: ReadonlyArray<SkippedPath>
  readonly changes: ReadonlyArray<PlannedChange>
  readonly unchanged: number
  readonly conflicts: ReadonlyArray<RestoreConflict>
  readonly canApply: boolean
  readonly planDigest: string
  /** Present when `canApply`: redeem it with `applyPointRestore` within five minutes. */
  readonly token?: string
  readonly tokenExpiresAt?: number
}

/** Lists what restoring `pointId` would change and, when it can be applied, issues a token. */
export const previewPointRestore = (sessionId: SessionId, pointId: PointId) =>
  Effect.gen(function* () {
    const p = yield* planPointRestore(sessionId, pointId)
    const canApply = p.conflicts.length === 0
    const base: PointRestorePreview = {
      pointId,
      protected: p.protected,
      leftOut: p.point.skipped,
      changes: p.changes,
      unchanged: p.unchanged,
      conflicts: p.conflicts,
      canApply,
      planDigest: p.planDigest,
    }
    if (!canApply) return base
    const issued = yield* issuePreviewToken(sessionId, pointId, p.planDigest)
    const withToken: PointRestorePreview = { ...base, token: issued.token, tokenExpiresAt: issued.expiresAt }
    return withToken
  })
