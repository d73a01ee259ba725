// The SQLite OperationJournal against the shared contract, on a file reopened by a second
// connection, and the store's integrity check after use.
import { OperationJournal } from "@rewind/core"
import { operationJournalConformance } from "@rewind/testkit"
import { Context, Effect, Layer } from "effect"
import { SqliteSessionStore } from "../src/index.js"
import { tempStorePath } from "./tempStore.js"

// The connection stays open for the rest of the test's scope.
const open = (file: string) =>
  Effect.map(Layer.build(SqliteSessionStore.layer({ path: file })), (context) =>
    Context.get(context, OperationJournal),
  )

operationJournalConformance("sqlite file", {
  make: Effect.gen(function* () {
    const file = yield* tempStorePath
    const journal = yield* open(file)
    return { journal, reopen: open(file) }
  }),
})
