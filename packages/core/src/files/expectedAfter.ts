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
 * Invariants: edits apply to the pre-image decoded as UTF-8 (a byte-order mark kept as text, so
 * it is still there after the edit, as an edit of the text leaves it), in order, each as the tool
 * does (`replaceAll`: every occurrence; otherwise the first); an edit whose `oldString` is not
 * found, or a pre-image that is not UTF-8 text, gives no expectation at all (`undefined`).
 *
 * Line endings: an agent's edit tool matches and writes `\n` in a file whose lines end in `\r\n`
 * (it reads the text with its line endings normalised and writes it back with the file's own). So
 * when every line of the pre-image ends in `\r\n` and no edit string holds a `\r`, the edits are
 * applied to the text with `\n` endings and the result is given `\r\n` endings again; otherwise
 * they apply to the text as it is. Either way it stays a guess: a tool that does otherwise makes
 * the read wait, and never changes what is recorded.
 */
import { Schema } from "effect"

export const ExpectedEdit = Schema.Struct({
  oldString: Schema.String,
  newString: Schema.String,
  replaceAll: Schema.optional(Schema.Boolean),
})
export type ExpectedEdit = typeof ExpectedEdit.Type

export const ExpectedAfter = Schema.Union(
  /** The tool wrote this whole content (Write, write_file). */
  Schema.TaggedStruct("Written", { content: Schema.String }),
  /** The tool applied these edits, in order, to the file as it was before it ran. */
  Schema.TaggedStruct("Edited", { edits: Schema.Array(ExpectedEdit) }),
)
export type ExpectedAfter = typeof ExpectedAfter.Type

// `ignoreBOM`: the mark stays in the text (the default decoder drops it, and the expected bytes
// of any edited file that has one would then never match).
const utf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true })
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
  const original = before === null ? "" : decoded(before)
  if (original === undefined) return undefined
  const crlf =
    endsLinesInCrlf(original) && !expected.edits.some((e) => hasCr(e.oldString) || hasCr(e.newString))
  const edited = applyEdits(crlf ? original.replaceAll("\r\n", "\n") : original, expected.edits)
  if (edited === undefined) return undefined
  return encoder.encode(crlf ? edited.replaceAll("\n", "\r\n") : edited)
}

const hasCr = (s: string) => s.includes("\r")

/** Whether the text has lines and every one of them ends in `\r\n` (no bare `\n`). */
const endsLinesInCrlf = (text: string) => {
  let at = text.indexOf("\n")
  if (at === -1) return false
  for (; at !== -1; at = text.indexOf("\n", at + 1)) if (at === 0 || text[at - 1] !== "\r") return false
  return true
}

/** The edits applied in order, as the tool applies them; undefined when one cannot apply. */
const applyEdits = (from: string, edits: ReadonlyArray<ExpectedEdit>): string | undefined => {
  let text = from
  for (const [i, edit] of edits.entries()) {
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
  return text
}
