/**
 * The content the operation journal still needs, as GC roots: both versions of every file of an
 * operation that is pending (recover may continue or roll it back) or committed with its redo
 * entry still available (redo writes the rescue versions back and checks the planned ones). The
 * snapshot engine's collector (`pointGc.ts`) marks them itself, so no host can forget them.
 */
import type { ContentHash } from "@rewind/contracts"
import { Effect } from "effect"
import { OperationJournal } from "../ports/OperationJournal.js"

export const journalRoots = Effect.gen(function* () {
  const journal = yield* OperationJournal
  const roots = new Set<ContentHash>()
  for (const record of yield* journal.all()) {
    const live =
      record.status === "pending" ||
      (record.status === "committed" && record.intent.redo !== undefined && !record.redoConsumed)
    if (!live) continue
    for (const file of record.intent.files) {
      if (file.rescue._tag === "present") roots.add(file.rescue.hash)
      if (file.planned._tag === "present") roots.add(file.planned.hash)
    }
  }
  return [...roots]
})
