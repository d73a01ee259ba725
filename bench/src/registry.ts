/**
 * Every benchmark case, in the order they run. To add a benchmark, export a `BenchCase` from a
 * `*.bench.ts` module and list it here (docs/benchmarks.md, "How to add a benchmark").
 */
import { checkpoints } from "./checkpoints.bench.js"
import { conversationProjection, conversationRewind } from "./conversation.bench.js"
import { shapeFloor } from "./floors.bench.js"
import { fork } from "./fork.bench.js"
import type { BenchCase } from "./harness/types.js"
import { hooks } from "./hooks.bench.js"
import { isolatedForks } from "./isolatedForks.bench.js"
import { langgraph } from "./langgraph.bench.js"
import { shapeLive } from "./live.bench.js"
import { benchPostgresUrl, postgresStore } from "./postgresStore.bench.js"
import { serve } from "./server.bench.js"
import { shadowGitChanges, shadowGitWorkspace } from "./shadowGit.bench.js"
import { shapeCli, shapeFacade } from "./shapes.bench.js"
import { snapshots } from "./snapshots.bench.js"
import { sqliteStore } from "./sqliteStore.bench.js"
import { ui } from "./ui.bench.js"

export const CASES: ReadonlyArray<BenchCase> = [
  shadowGitWorkspace,
  shadowGitChanges,
  conversationProjection,
  conversationRewind,
  fork,
  checkpoints,
  snapshots,
  sqliteStore,
  langgraph,
  // The babel/babel shape at 1× (and 4× in a full run), in-process and whole-process.
  shapeFacade,
  shapeCli,
  // What a cold capture and the store cannot go below at that shape (issue 23's missed targets).
  shapeFloor,
  // Isolated forks at the babel shape: materialising a tree vs git worktree add; a 100-file merge.
  isolatedForks,
  // The live engine (the workspace watcher) at the same shape, in-process and through rewind serve.
  shapeLive,
  // rewind serve over stdio (the built bin): round trip, and a repeat capture at the babel shape.
  serve,
  // rewind hook claude-code as whole processes: latency with a running server, and a prompt's capture.
  hooks,
  // rewind ui in headless chromium: a 10,000-message timeline's load and render.
  ui,
  // Needs a PostgreSQL server (REWIND_PG_URL; `source .ci/postgres.sh` starts one).
  ...(benchPostgresUrl() === "" ? [] : [postgresStore]),
]
