/**
 * Splits a byte stream into newline-delimited lines with a bound on each line's size.
 *
 * Invariants:
 * - memory is bounded by `maxLineBytes` plus one chunk: a line that grows past the limit is
 *   dropped as it arrives (its bytes are not kept) and reported once as `oversize`, and the
 *   splitter skips to the next newline;
 * - lines are decoded as UTF-8 only when complete, so a multi-byte character split across chunks
 *   is never mangled; a trailing `\r` is removed (CRLF clients);
 * - a last line without a newline is handed over at `end()`.
 */

export type LineEvent =
  | { readonly _tag: "line"; readonly text: string }
  | { readonly _tag: "oversize"; readonly bytes: number }

export interface LineSplitter {
  /** The complete lines (and oversize reports) this chunk finished, in order. */
  readonly push: (chunk: Uint8Array) => ReadonlyArray<LineEvent>
  /** What is left at end of input. */
  readonly end: () => ReadonlyArray<LineEvent>
}

const NEWLINE = 0x0a

export const makeLineSplitter = (maxLineBytes: number): LineSplitter => {
  const decoder = new TextDecoder("utf-8", { fatal: false })
  let parts: Array<Uint8Array> = []
  let size = 0
  /** Bytes of a line already past the limit, being skipped; -1 when not skipping. */
  let skipped = -1

  const take = (): string => {
    const whole = parts.length === 1 ? parts[0]! : Buffer.concat(parts, size)
    parts = []
    size = 0
    const text = decoder.decode(whole)
    return text.endsWith("\r") ? text.slice(0, -1) : text
  }

  const append = (piece: Uint8Array) => {
    if (skipped >= 0) {
      skipped += piece.length
      return
    }
    if (size + piece.length > maxLineBytes) {
      skipped = size + piece.length
      parts = []
      size = 0
      return
    }
    if (piece.length > 0) {
      parts.push(piece)
      size += piece.length
    }
  }

  const finishLine = (events: Array<LineEvent>) => {
    if (skipped >= 0) {
      events.push({ _tag: "oversize", bytes: skipped })
      skipped = -1
      return
    }
    events.push({ _tag: "line", text: take() })
  }

  return {
    push: (chunk) => {
      const events: Array<LineEvent> = []
      let start = 0
      for (;;) {
        const at = chunk.indexOf(NEWLINE, start)
        if (at < 0) break
        append(chunk.subarray(start, at))
        finishLine(events)
        start = at + 1
      }
      // Copy the tail: the caller may reuse the chunk's buffer.
      if (start < chunk.length) append(Uint8Array.prototype.slice.call(chunk, start))
      return events
    },
    end: () => {
      const events: Array<LineEvent> = []
      if (skipped >= 0 || size > 0) finishLine(events)
      return events
    },
  }
}
