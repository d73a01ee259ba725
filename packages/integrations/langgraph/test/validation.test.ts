// LangGraph's own checkpointer validation suite (@langchain/langgraph-checkpoint-validation, through
// its library entry point) against the saver on the embedded SQLite store. One database file for the
// whole run; every checkpointer the suite asks for is a new saver (its own connection) in a scope of
// its own, so the suite's "list every thread" cases see only their own threads.
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { deltaChannelHistoryTests, validate } from "@langchain/langgraph-checkpoint-validation"
import { openSqliteSaver, type RewindCheckpointSaver } from "../src/index.js"

const dir = mkdtempSync(join(tmpdir(), "rewind-langgraph-validation-"))
let opened = 0

const initializer = {
  // Not a name the suite special-cases (it skips one test only for the official savers' names).
  checkpointerName: "rewind-sqlite",
  createCheckpointer: () => openSqliteSaver({ path: join(dir, "store.db"), scope: `v${opened++}` }),
  destroyCheckpointer: (saver: RewindCheckpointSaver) => saver.close(),
  afterAll: () => rmSync(dir, { recursive: true, force: true }),
}

validate(initializer)
deltaChannelHistoryTests(initializer)
