/**
 * What a file tool says the file holds after it ran, as the host declares it with the after-event
 * (`recordCheckpointFromIntent`'s `expected`): the content a Write wrote, or the string edits an
 * Edit / MultiEdit / replace applied to the file as it was before (the write intent's pre-image).
 *
 * It is a guess, used for one thing only: a read that finds exactly these bytes may skip the wait
 * a freshly changed file is otherwise given (`WorkspaceReadOptions.expected`). What is recorded is
 * always what the read found; a guess that is wrong (another writer, line-ending conversion, an
 * edit the tool refused) costs the wait and nothing else.
 *
 * Invariants: edits apply to the pre-image decoded as UTF-8, in order, each as the tool does
 * (`replaceAll`: every occurrence; otherwise the first); an edit whose `oldString` is not found,
 * or a pre-image that is not UTF-8 text, gives no expectation at all (`undefined`).
 */
import { Schema } from "effect"

export const ExpectedEdit = Schema.Struct({
  oldString: Schema.String,
  newString: Schema.String,
  replaceAll: Schema.optional(Schema.Boolean),
})

export const ExpectedAfter = Schema.Union(
  /** The tool wrote this whole content (Write, write_file). */
  Schema.TaggedStruct("Written", { content: Schema.String }),
  /** The tool applied these edits, in order, to the file as it was before it ran. */
  Schema.TaggedStruct("Edited", { edits: Schema.Array(ExpectedEdit) }),
)
export type ExpectedAfter = typeof ExpectedAfter.Type

const utf8 = new TextDecoder("utf-8", { fatal: true })
const encoder = new TextEncoder()

const decoded = (bytes: Uint8Array | null): string | undefined => {
  if (bytes === null) return undefined
  try {
    return utf8.decode(bytes)
  } catch {
    return undefined
  }
}

/**
 * The bytes the file should hold after the tool ran, from its declaration and the before-content
 * (`null`: the file did not exist); `undefined` when that cannot be told.
 */
export const expectedAfterContent = (
  expected: ExpectedAfter | undefined,
  before: Uint8Array | null,
): Uint8Array | undefined => {
  if (expected === undefined) return undefined
  if (expected._tag === "Written") return encoder.encode(expected.content)
  // A new file made by an edit: an empty `oldString` on nothing gives its `newString`.
  let text = before === null ? "" : decoded(before)
  if (text === undefined) return undefined
  for (const [i, edit] of expected.edits.entries()) {
    if (edit.oldString === "") {
      if (i !== 0 || text !== "") return undefined
      text = edit.newString
      continue
    }
    const at = text.indexOf(edit.oldString)
    if (at === -1) return undefined
    text =
      edit.replaceAll === true
        ? text.split(edit.oldString).join(edit.newString)
        : text.slice(0, at) + edit.newString + text.slice(at + edit.oldString.length)
  }
  return encoder.encode(text)
}
