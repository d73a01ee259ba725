/**
 * The isolated half of a fork: the child gets a tree of its own instead of sharing the parent's.
 * `buildIsolatedTree` runs once the child's id and copied turns are known and before anything is
 * committed: it checks the target directory (`Workspaces.prepare`: absolute, missing or empty,
 * outside the source tree and the host's tree, and the source tree not inside it), plans the fork
 * base (`forkBase.ts`), and makes the tree atomically: journaled (`fork_materialise`, when the
 * host has a journal), materialised into a private directory beside the target
 * (`Workspaces.stage`, `materialiseTree.ts`), then renamed onto the target in one step
 * (`publish`). Anything that stops it before that removes the private directory; a crash leaves
 * the journal's record for `recover()`. It answers the events that record the tree in the child —
 * the base as the child's first point, then `WorkspaceAssigned` — written only after the rename,
 * with the report, a `discard` for when the commit fails and `committed` for when it succeeds.
 * The parent's tree is only read.
 */
import {
  type ForkWorkspace,
  type IsolatedTreeReport,
  type OperationId,
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
import { IdGenerator } from "../ports/IdGenerator.js"
import { OperationJournal } from "../ports/OperationJournal.js"
import { SessionStore } from "../ports/SessionStore.js"
import { Workspace, type WorkspaceService } from "../ports/Workspace.js"
import { type StagedTree, Workspaces, type WorkspacesService } from "../ports/Workspaces.js"
import type { SessionState } from "../session/sessionState.js"
import { summarise } from "../snapshot/capturePoint.js"
import { latestTurnPoint, pointIdFor } from "../snapshot/pointIndex.js"
import { encodeManifest, loadManifest } from "../snapshot/pointManifest.js"
import { type BaseEntry, type ForkBoundaryAt, planForkBase } from "./forkBase.js"
import { materialiseTree } from "./materialiseTree.js"

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
  /** For a commit that failed: takes the published tree back and closes the journal's record. */
  readonly discard: Effect.Effect<void>
  /** For a commit that succeeded: closes the journal's record. */
  readonly committed: Effect.Effect<void>
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

/**
 * The journal's record of the tree being made, when the host has a journal: begun before the
 * private directory exists, completed when the fork is committed or abandoned, so a crash anywhere
 * between leaves an operation `recover()` lists (and doctor reports).
 */
const treeJournal = (input: IsolatedTreeInput, operationId: OperationId, tree: StagedTree) =>
  Effect.gen(function* () {
    const journal = yield* Effect.serviceOption(OperationJournal)
    if (Option.isNone(journal)) return { complete: (_: "committed" | "rolled_back") => Effect.void }
    yield* journal.value.begin({
      operationId,
      sessionId: input.parentId,
      kind: "fork_materialise",
      files: [],
      tree: { root: tree.root, staging: tree.staging, childSessionId: input.childId },
      startedAt: yield* Clock.currentTimeMillis,
    })
    return {
      complete: (status: "committed" | "rolled_back") =>
        Effect.flatMap(Clock.currentTimeMillis, (at) =>
          Effect.ignore(journal.value.complete(operationId, { status, at })),
        ),
    }
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
    const operationId = (yield* (yield* IdGenerator).next("op")) as OperationId
    const staged = yield* workspaces.prepare(wanted, operationId)
    const root = staged.root
    for (const tree of [source.root, workspaces.hostRoot]) {
      if (within(root, tree) || within(tree, root)) {
        return yield* refused("overlaps_tree", root, `${root} (as resolved) overlaps the tree ${tree}`)
      }
    }
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
    const journal = yield* treeJournal(input, operationId, staged)
    // Whatever stops the tree before it is in place (a failure, a refusal, an interruption)
    // removes the private directory and closes the journal's record: no target, no temp dir.
    // Only a private directory this fork made is removed (one `stage` refused was not its own).
    let madeStaging = false
    const abandon = Effect.zipRight(
      Effect.suspend(() => (madeStaging ? Effect.ignore(workspaces.discard(staged)) : Effect.void)),
      journal.complete("rolled_back"),
    )
    const made = yield* Effect.gen(function* () {
      const target = yield* workspaces.stage(staged)
      madeStaging = true
      const made = yield* materialiseTree({
        workspaces,
        source,
        sourceLatest: latestTurnPoint({ points: input.parent.points, writeIntents: [] }),
        target,
        base,
        leftOut: plan.point.skipped,
        copyUnrecorded: input.workspace.copyUnrecorded === true,
      })
      const manifestHash = yield* artifacts.put(encodeManifest(made.manifest))
      // One step: the whole tree appears at the target, or nothing does.
      yield* workspaces.publish(staged)
      return { ...made, manifestHash }
    }).pipe(Effect.onExit((exit) => (exit._tag === "Success" ? Effect.void : abandon)))
    const discard = Effect.zipRight(
      Effect.ignore(workspaces.unpublish(staged)),
      journal.complete("rolled_back"),
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
          manifestHash: made.manifestHash,
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
          baseManifestHash: made.manifestHash,
          sourceAt: plan.boundary,
        }),
      ],
      report,
      discard,
      committed: journal.complete("committed"),
    } satisfies IsolatedTree
  })
