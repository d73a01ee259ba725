/**
 * Isolated forks: the workspace choice a fork takes (`shared`, today's behaviour, or `isolated`
 * with a directory of its own), the record in the child of the tree it was given
 * (`WorkspaceAssigned`), and the report of how that tree was materialised. A session without a
 * `WorkspaceAssigned` works in the host's workspace (every session before isolated forks existed
 * reads as shared).
 */
import { Schema } from "effect"
import { ContentHash, PointId, SessionId } from "./ids.js"
import { SkippedPath } from "./points.js"

/** Where a fork's child works: in the parent's tree, or in a new tree of its own. */
export const ForkWorkspace = Schema.Union(
  Schema.Struct({ mode: Schema.Literal("shared") }),
  Schema.Struct({
    mode: Schema.Literal("isolated"),
    /** An absolute directory that does not exist or is empty, outside the parent's tree. */
    root: Schema.String.pipe(Schema.minLength(1)),
    /**
     * Also copy, from the parent's tree as it is now, what the fork point did not hold (the
     * directories and files its capture left out: `node_modules`, build output over the size
     * cap); left out by default. Protected paths (`.git`, the store) are never copied.
     */
    copyUnrecorded: Schema.optional(Schema.Boolean),
  }),
)
export type ForkWorkspace = typeof ForkWorkspace.Type

/** How an isolated child's tree was made. */
export const IsolatedTreeReport = Schema.Struct({
  root: Schema.String,
  /** The point recorded in the child holding the tree as materialised: the fork base of a merge. */
  basePointId: PointId,
  files: Schema.Number.pipe(Schema.int(), Schema.nonNegative()),
  links: Schema.Number.pipe(Schema.int(), Schema.nonNegative()),
  bytes: Schema.Number.pipe(Schema.int(), Schema.nonNegative()),
  /** Files made as copy-on-write clones of a parent file verified to hold the wanted content. */
  cloned: Schema.Number.pipe(Schema.int(), Schema.nonNegative()),
  /** Files written from the artifact store. */
  written: Schema.Number.pipe(Schema.int(), Schema.nonNegative()),
  /** What the fork point did not hold, as its capture reported it; copied only on request. */
  leftOut: Schema.Array(SkippedPath),
  /** Paths of `leftOut` copied from the parent's tree (with `copyUnrecorded`). */
  copied: Schema.Array(Schema.String),
  /** Paths of the fork point not materialised, with why (protected now, or unusable). */
  notMaterialised: Schema.Array(SkippedPath),
})
export type IsolatedTreeReport = typeof IsolatedTreeReport.Type

/**
 * Written in an isolated child, after its copied history: the child works in `root`, materialised
 * from the state at the fork boundary (`basePointId`, a point of this stream).
 */
export class WorkspaceAssigned extends Schema.TaggedClass<WorkspaceAssigned>()("WorkspaceAssigned", {
  mode: Schema.Literal("isolated"),
  root: Schema.String,
  /** The session whose tree state the child's tree was made from. */
  sourceSessionId: SessionId,
  basePointId: PointId,
  baseManifestHash: ContentHash,
  /**
   * How many of the source session's events the base covers (the fork boundary's place in its
   * stream): of two forks of one session, the one with the smaller value was made from the older
   * state, the base both descend from. Absent on forks made before it was recorded.
   */
  sourceAt: Schema.optional(Schema.Int.pipe(Schema.nonNegative())),
}) {}
