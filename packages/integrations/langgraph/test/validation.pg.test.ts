// LangGraph's validation suite against the saver on PostgreSQL, when a server is up (REWIND_PG_URL,
// which .ci/postgres.sh exports; CI starts one). Without one the suite is skipped with the reason
// printed, never silently. One schema for the run (dropped at the end); each checkpointer the suite
// asks for is a new saver with its own pool, in a scope of its own.
import { randomUUID } from "node:crypto"
import { deltaChannelHistoryTests, validate } from "@langchain/langgraph-checkpoint-validation"
import pg from "pg"
import { describe } from "vitest"
import { openPostgresSaver, type RewindCheckpointSaver } from "../src/index.js"

const url = process.env.REWIND_PG_URL ?? ""
const schema = `rw_lg_${randomUUID().replaceAll("-", "").slice(0, 16)}`
let opened = 0

if (url === "") {
  console.warn(
    "REWIND_PG_URL is not set: the LangGraph validation suite on PostgreSQL is skipped (run `source .ci/postgres.sh` first to start a throwaway server)",
  )
}

const initializer = {
  checkpointerName: "rewind-postgres",
  createCheckpointer: () =>
    openPostgresSaver({ connectionString: url, schema, poolSize: 2, scope: `v${opened++}` }),
  destroyCheckpointer: (saver: RewindCheckpointSaver) => saver.close(),
  afterAll: async () => {
    const admin = new pg.Client({ connectionString: url })
    await admin.connect()
    try {
      await admin.query(`drop schema if exists "${schema}" cascade`)
    } finally {
      await admin.end()
    }
  },
}

// Without a server the suite's own tests are listed as skipped (none is replaced by a placeholder).
describe.skipIf(url === "")("rewind-postgres", () => {
  validate(initializer)
  deltaChannelHistoryTests(initializer)
})
