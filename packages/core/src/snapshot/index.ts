/**
 * The snapshot capability: capturing a workspace point (scan, manifest, artifact cache), the point
 * index, write intents, restoring to a point, and GC.
 */
export * from "./applyPointRestore.js"
export * from "./capturePoint.js"
export * from "./pointArtifactCache.js"
export * from "./pointDiff.js"
export * from "./pointGc.js"
export * from "./pointIndex.js"
export * from "./pointManifest.js"
export * from "./restoreToPoint.js"
export * from "./workspaceScan.js"
export * from "./writeIntents.js"
