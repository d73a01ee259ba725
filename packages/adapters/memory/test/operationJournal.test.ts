// The in-memory OperationJournal against the shared contract ("reopen" is the same process).
import { operationJournalConformance } from "@rewind/testkit"
import { Effect } from "effect"
import { MemoryOperationJournal } from "../src/index.js"

operationJournalConformance("memory", {
  make: Effect.map(MemoryOperationJournal.make(), (journal) => ({
    journal,
    reopen: Effect.succeed(journal),
  })),
})
