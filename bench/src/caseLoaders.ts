/**
 * How the case process loads the one case it runs: by name, importing only that case's module.
 * The registry (registry.ts) imports every case for the parent, which needs each case's sizes and
 * description; a case process that did the same loaded playwright, LangGraph, pg and every other
 * case's dependencies (about 2 s of CPU and 190 MB of RSS here), and that memory was in its peak
 * RSS figure. `caseLoaders.test.ts` checks this map names exactly the registry's cases.
 */
import type { BenchCase } from "./harness/types.js"

export const CASE_LOADERS: Readonly<Record<string, () => Promise<BenchCase>>> = {
  "shadow-git": () => import("./shadowGit.bench.js").then((m) => m.shadowGitWorkspace),
  "shadow-git-changes": () => import("./shadowGit.bench.js").then((m) => m.shadowGitChanges),
  "conversation-projection": () => import("./conversation.bench.js").then((m) => m.conversationProjection),
  "conversation-rewind": () => import("./conversation.bench.js").then((m) => m.conversationRewind),
  fork: () => import("./fork.bench.js").then((m) => m.fork),
  checkpoints: () => import("./checkpoints.bench.js").then((m) => m.checkpoints),
  snapshots: () => import("./snapshots.bench.js").then((m) => m.snapshots),
  "sqlite-store": () => import("./sqliteStore.bench.js").then((m) => m.sqliteStore),
  langgraph: () => import("./langgraph.bench.js").then((m) => m.langgraph),
  "shape-facade": () => import("./shapes.bench.js").then((m) => m.shapeFacade),
  "shape-cli": () => import("./shapes.bench.js").then((m) => m.shapeCli),
  "shape-floor": () => import("./floors.bench.js").then((m) => m.shapeFloor),
  "isolated-fork": () => import("./isolatedForks.bench.js").then((m) => m.isolatedForks),
  "shape-live": () => import("./live.bench.js").then((m) => m.shapeLive),
  serve: () => import("./server.bench.js").then((m) => m.serve),
  hooks: () => import("./hooks.bench.js").then((m) => m.hooks),
  ui: () => import("./ui.bench.js").then((m) => m.ui),
  "postgres-store": () => import("./postgresStore.bench.js").then((m) => m.postgresStore),
}
