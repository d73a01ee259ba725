// The in-memory OperationJournal against the shared contract ("reopen" is the same process).
import { OperationJournals } from "@rewind/core"
import { operationJournalConformance } from "@rewind/testkit"
import { Effect } from "effect"

operationJournalConformance("memory", {
  make: Effect.map(OperationJournals.makeMemory(), (journal) => ({
    journal,
    reopen: Effect.succeed(journal),
  })),
})
