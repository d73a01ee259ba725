/**
 * The agent's last reply of a turn, read from Claude Code's session transcript: its `Stop`
 * payload names the transcript (`transcript_path`) and, in newer releases only, carries the reply
 * itself (`last_assistant_message`, used directly when present). A turn needs its reply to be
 * forked at (`rewind fork`), so without one the turn could not be.
 *
 * The transcript is JSONL, one entry per line (https://code.claude.com/docs/en/hooks, "Hook
 * input"; entries as in the Agent SDK's session files): `{"type":"assistant","message":{"id":…,
 * "content":[{"type":"text","text":…},{"type":"tool_use",…}]}}`, `{"type":"user","message":
 * {"content": "…" | [{"type":"tool_result",…}]}}`, and entries of other types (system, summary,
 * file-history-snapshot…) that are skipped.
 *
 * Invariants: the file is read from its end, in chunks, never more than `MAX_BYTES` of it (a
 * session's transcript grows without end); the walk stops at the turn's prompt (a user entry that
 * is not a tool result), so an earlier turn's reply is never taken for this one's; nothing here
 * throws: a missing, unreadable or garbled transcript is an answer (`problem`) for the caller to
 * log, and the turn then ends with no reply, as it did before.
 */
import { closeSync, fstatSync, openSync, readSync } from "node:fs"

const CHUNK = 64 * 1024
/** The most of a transcript read for one reply: a turn's tail is far smaller. */
const MAX_BYTES = 4 * 1024 * 1024

export type TranscriptReply = { readonly text: string } | { readonly problem: string }

interface Entry {
  readonly type?: unknown
  readonly message?: { readonly id?: unknown; readonly content?: unknown }
}

const textOf = (content: unknown): string =>
  Array.isArray(content)
    ? content
        .filter((b) => typeof b === "object" && b !== null && b.type === "text" && typeof b.text === "string")
        .map((b) => b.text as string)
        .join("")
    : typeof content === "string"
      ? content
      : ""

/** A user entry that is the person's prompt (not a tool's result fed back): the turn's start. */
const isPrompt = (e: Entry) => {
  const content = e.message?.content
  if (typeof content === "string") return true
  return (
    Array.isArray(content) &&
    content.some((b) => typeof b === "object" && b !== null && b.type !== "tool_result")
  )
}

/** The lines of the transcript's tail, last first, within `MAX_BYTES`; `partial` if it was cut. */
const tailLines = (path: string): { readonly lines: ReadonlyArray<string>; readonly partial: boolean } => {
  const fd = openSync(path, "r")
  try {
    const size = fstatSync(fd).size
    const start = Math.max(0, size - MAX_BYTES)
    const chunks: Array<Buffer> = []
    for (let end = size; end > start; end -= CHUNK) {
      const from = Math.max(start, end - CHUNK)
      const buffer = Buffer.alloc(end - from)
      let filled = 0
      while (filled < buffer.length) {
        const n = readSync(fd, buffer, filled, buffer.length - filled, from + filled)
        if (n === 0) break
        filled += n
      }
      chunks.unshift(buffer.subarray(0, filled))
    }
    const lines = Buffer.concat(chunks).toString("utf8").split("\n")
    // A tail that starts mid-file starts mid-line: its first line is not a whole entry.
    if (start > 0) lines.shift()
    return { lines: lines.reverse(), partial: start > 0 }
  } finally {
    closeSync(fd)
  }
}

/** The last assistant text of the turn the transcript ends with. */
export const lastAssistantText = (path: string): TranscriptReply => {
  let tail: ReturnType<typeof tailLines>
  try {
    tail = tailLines(path)
  } catch (error) {
    const code = (error as { code?: string }).code
    return { problem: `the transcript ${path} cannot be read (${code ?? String(error)}); no reply recorded` }
  }
  let garbled = 0
  let messageId: unknown
  const parts: Array<string> = []
  for (const line of tail.lines) {
    if (line.trim() === "") continue
    let entry: Entry
    try {
      entry = JSON.parse(line) as Entry
    } catch {
      garbled++
      continue
    }
    if (typeof entry !== "object" || entry === null) {
      garbled++
      continue
    }
    if (entry.type === "user" && isPrompt(entry)) break
    if (entry.type !== "assistant") continue
    const text = textOf(entry.message?.content)
    const id = entry.message?.id
    if (parts.length > 0) {
      // One reply may be logged as several entries of the same message, one per content block.
      if (id === undefined || id !== messageId) break
      if (text !== "") parts.unshift(text)
    } else if (text !== "") {
      messageId = id
      parts.push(text)
    }
  }
  if (parts.length > 0) return { text: parts.join("\n") }
  const why =
    garbled > 0
      ? `${garbled} line(s) of it are not JSON`
      : tail.partial
        ? `none in its last ${MAX_BYTES} bytes`
        : "the turn has no assistant text"
  return { problem: `no reply found in the transcript ${path} (${why}); no reply recorded` }
}
