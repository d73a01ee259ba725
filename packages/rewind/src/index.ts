/**
 * rewind: the embeddable package. `openRewind` (the Promise facade derived from core's `Rewind`
 * service, over the embedded default store), the layers it wires, and the slash-command parser
 * and dispatcher. Its public API is this module and `rewind/cli`; `./internal/*` is not exported.
 */

// The point diff moved to @rewind/core (snapshot/); its names stay importable from here.
export type { DiffSide, NoPatchReason, PointDiff, PointDiffEntry, PointDiffOptions } from "@rewind/core"
export * from "./dispatchSlashCommand.js"
export * from "./errors.js"
export * from "./layers.js"
export * from "./openRewind.js"
export * from "./slashCommand.js"
