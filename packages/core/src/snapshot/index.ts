/**
 * The snapshot capability: capturing a workspace point (scan, manifest, artifact cache), the point
 * index, write intents, restoring to a point, and GC.
 */
export {
  applyPointRestore,
  type PointRestoreResult,
} from "./applyPointRestore.js"
export {
  type CaptureOptions,
  type CaptureOutcome,
  type CaptureProgress,
  type CaptureScan,
  type CaptureSettings,
  CaptureShortcuts,
  capturePoint,
  DEFAULT_CAPTURE_SETTINGS,
  recordPoint,
  reusableDecisions,
  summarise,
} from "./capturePoint.js"
export { LayerPaging, type Paging } from "./layerPages.js"
export {
  layerPointArtifactCache,
  PointArtifactCache,
  type PointArtifactCacheService,
} from "./pointArtifactCache.js"
export {
  type DiffSide,
  diffPoint,
  type NoPatchReason,
  type PointDiff,
  type PointDiffEntry,
  type PointDiffOptions,
} from "./pointDiff.js"
export {
  type CleanupOptions,
  type CleanupReport,
  cleanup,
  GcRootUnreadable,
  previewCleanup,
  type SnapshotStatus,
  snapshotStatus,
} from "./pointGc.js"
export { ignoredInTree, isIgnoreFile } from "./pointIgnoreCheck.js"
export {
  pointIdFor,
  readPointIndex,
} from "./pointIndex.js"
export {
  encodeManifest,
  loadManifest,
  loadManifestTop,
  loadStatCacheLayers,
  type Manifest,
  type ManifestEntry,
  ManifestUnreadable,
  manifestBlobs,
  type StatCacheEntry,
  sameManifestEntry,
} from "./pointManifest.js"
export {
  type PointRestorePreview,
  previewPointRestore,
} from "./restoreToPoint.js"
export {
  listTurns,
  manifestChanges,
  manifestWalk,
  type OtherWriter,
  otherWriters,
  type TurnFileChange,
  type TurnOnBranch,
  type TurnSummary,
  type TurnTarget,
  turnRestoreTarget,
  turnTarget,
} from "./sessionTurns.js"
export { decodeStatCacheLayer } from "./statCacheBinary.js"
export {
  layerTreeStatCache,
  type TreeStat,
  TreeStatCache,
  type TreeStatCacheService,
} from "./treeStatCache.js"
export { type Unseen, unseenIn } from "./unseenPaths.js"
export {
  type ScanResult,
  scanWorkspace,
} from "./workspaceScan.js"
export { declareWriteIntent } from "./writeIntents.js"
