/**
 * The isolated half of a fork: the child gets a tree of its own instead of sharing the parent's.
 * `buildIsolatedTree` runs once the child's id and copied turns are known and before anything is
 * committed: it checks and makes the target directory (`Workspaces.prepare`: absolute, missing or
 * empty, outside the source tree and the host's tree, and the source tree not inside it), plans the
 * fork base (`forkBase.ts`), materialises it (`materialiseTree.ts`), and answers the events that
 * record it in the child — the base as the child's first point, then `WorkspaceAssigned` — with
 * the report and a `discard` for when the commit fails. The parent's tree is only read.
 */
import {
  type ForkWorkspace,
  type IsolatedTreeReport,
  PointCaptured,
  refuse,
  type SessionEvent,
  type SessionId,
  type TurnId,
  WorkspaceAssigned,
  type WorkspacePath,
} from "@rewind/contracts"
import { Clock, Effect, Option } from "effect"
import { ArtifactStore } from "../ports/ArtifactStore.js"
import { SessionStore } from "../ports/SessionStore.js"
import { Workspace, type WorkspaceService } from "../ports/Workspace.js"
import { Workspaces, type WorkspacesService } from "../ports/Workspaces.js"
import type { SessionState } from "../session/sessionState.js"
import { summarise } from "../snapshot/capturePoint.js"
import { latestTurnPoint, pointIdFor } from "../snapshot/pointIndex.js"
import { encodeManifest, loadManifest } from "../snapshot/pointManifest.js"
import { type BaseEntry, type ForkBoundaryAt, planForkBase } from "./forkBase.js"
import { discardTree, materialiseTree } from "./materialiseTree.js"

export type IsolatedWorkspace = Extract<ForkWorkspace, { readonly mode: "isolated" }>

export interface IsolatedTreeInput {
  readonly parentId: SessionId
  readonly parent: SessionState
  readonly boundary: ForkBoundaryAt
  readonly workspace: IsolatedWorkspace
  readonly childId: SessionId
  /** The child's turn the base point is recorded for (the copy of the boundary's turn). */
  readonly childTurnId: TurnId
}

export interface IsolatedTree {
  readonly events: ReadonlyArray<SessionEvent>
  readonly report: IsolatedTreeReport
  readonly discard: Effect.Effect<void>
}

/** The part of a fork's request key naming its tree, so a command id reused for another tree is refused. */
export const isolatedKey = (workspace: ForkWorkspace | undefined) =>
  workspace?.mode === "isolated" ? `:isolated:${workspace.root}` : ""

const within = (inner: string, outer: string) =>
  inner === outer || inner.startsWith(outer.endsWith("/") ? outer : `${outer}/`)

const refused = (reason: string, root: string, message: string) =>
  refuse("workspace_refused", message, { reason, root })

/**
 * The services an isolated fork needs beyond a conversation fork's, read as options so a host
 * that forks conversations only (no workspace, no artifact store) still can.
 */
export const buildIsolatedTree = (input: IsolatedTreeInput) =>
  Effect.gen(function* () {
    const workspaces = yield* Effect.serviceOption(Workspaces)
    const source = yield* Effect.serviceOption(Workspace)
    const artifacts = yield* Effect.serviceOption(ArtifactStore)
    if (Option.isNone(workspaces) || Option.isNone(source) || Option.isNone(artifacts)) {
      return yield* refuse(
        "unavailable",
        "this host supplies no Workspaces (or no Workspace or ArtifactStore), so a fork cannot get a tree of its own",
      )
    }
    return yield* buildTree(input, workspaces.value, source.value).pipe(
      Effect.provideService(ArtifactStore, artifacts.value),
    )
  })

const buildTree = (input: IsolatedTreeInput, workspaces: WorkspacesService, source: WorkspaceService) =>
  Effect.gen(function* () {
    const store = yield* SessionStore
    const artifacts = yield* ArtifactStore
    const events = yield* store.read(input.parentId)
    const plan = planForkBase(events, input.boundary)
    if (!plan.ok) return yield* refuse(plan.kind, plan.message)
    const wanted = input.workspace.root
    // Checked before the directory is made: nothing is created for a target that is refused.
    for (const tree of [source.root, workspaces.hostRoot]) {
      if (within(wanted, tree) || within(tree, wanted)) {
        return yield* refused(
          "overlaps_tree",
          wanted,
          `${wanted} ${within(wanted, tree) ? "lies inside" : "contains"} the tree ${tree}; an isolated fork's tree must lie apart from it (choose a directory outside it)`,
        )
      }
    }
    const root = yield* workspaces.prepare(wanted)
    for (const tree of [source.root, workspaces.hostRoot]) {
      if (within(root, tree) || within(tree, root)) {
        return yield* refused("overlaps_tree", root, `${root} (as resolved) overlaps the tree ${tree}`)
      }
    }
    const opened = yield* workspaces.open(root)
    const target = opened.workspace
    const manifest = yield* Effect.catchAll(loadManifest(plan.point.manifestHash), (e) =>
      refuse("unavailable", `the manifest of point ${plan.point.pointId} cannot be read: ${e.message}`),
    )
    const base = new Map<WorkspacePath, BaseEntry>()
    for (const [path, entry] of manifest) {
      if (entry.kind === "file") base.set(path, { kind: "file", hash: entry.hash, mode: entry.mode })
      else if (entry.kind === "link") base.set(path, entry)
    }
    for (const [path, entry] of plan.overlay) {
      if (entry === null) base.delete(path)
      else base.set(path, entry)
    }
    const made = yield* materialiseTree({
      workspaces,
      source,
      sourceLatest: latestTurnPoint({ points: input.parent.points, writeIntents: [] }),
      target,
      base,
      leftOut: plan.point.skipped,
      copyUnrecorded: input.workspace.copyUnrecorded === true,
    })
    const discard = discardTree(target, [...made.manifest.keys(), ...(made.copied as Array<WorkspacePath>)])
    const manifestHash = yield* Effect.tapErrorCause(
      artifacts.put(encodeManifest(made.manifest)),
      () => discard,
    )
    const basePointId = pointIdFor(input.childId, input.childTurnId)
    const summary = summarise(made.manifest)
    const copied = new Set(made.copied)
    const at = yield* Clock.currentTimeMillis
    const report: IsolatedTreeReport = {
      root,
      basePointId,
      files: summary.files,
      links: summary.links,
      bytes: summary.bytes,
      cloned: made.cloned,
      written: made.written,
      leftOut: plan.point.skipped,
      copied: made.copied,
      notMaterialised: made.notMaterialised,
    }
    return {
      events: [
        new PointCaptured({
          pointId: basePointId,
          kind: "turn",
          turnId: input.childTurnId,
          manifestHash,
          reusedManifest: false,
          ...summary,
          skipped: [...plan.point.skipped.filter((s) => !copied.has(s.path)), ...made.notMaterialised],
          capturedAt: at,
        }),
        new WorkspaceAssigned({
          mode: "isolated",
          root,
          sourceSessionId: input.parentId,
          basePointId,
          baseManifestHash: manifestHash,
          sourceAt: plan.boundary,
        }),
      ],
      report,
      discard,
    } satisfies IsolatedTree
  })
