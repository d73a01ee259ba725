/**
 * The transcript of a session: the active branch as a host or the CLI shows it — each message with
 * its parts, whether a compaction hides it from the model, and the turn it belongs to.
 */
import type { Message, Part } from "@rewind/contracts"
import { branchView } from "./branchView.js"
import type { SessionState } from "./sessionState.js"

export interface TranscriptEntry {
  readonly message: Message
  readonly parts: ReadonlyArray<Part>
  /** True when a live compaction summary stands in for this message in the model's history. */
  readonly compacted: boolean
}

export const transcript = (state: SessionState): ReadonlyArray<TranscriptEntry> => {
  const view = branchView(state)
  const out: Array<TranscriptEntry> = []
  for (const id of view.messageIds) {
    const message = state.messages.get(id)
    if (message === undefined) continue
    out.push({ message, parts: state.parts.get(id) ?? [], compacted: view.coveredBy.has(id) })
  }
  return out
}

/** The plain text of a message: its text parts joined, as a prompt box would be refilled with. */
export const messageText = (state: SessionState, message: Message): string =>
  (state.parts.get(message.id) ?? [])
    .filter((p) => p.kind === "text" && p.text !== undefined)
    .map((p) => p.text)
    .join("\n")
