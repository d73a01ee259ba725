/**
 * Names that are not UTF-8. A name on disk is bytes; a `WorkspacePath` is a string, and decoding
 * bad bytes would replace them with U+FFFD, turning the name into another one (and two names into
 * the same one). Such an entry is reported under an escaped display form instead: each byte that
 * is not part of a well-formed UTF-8 sequence as `\xHH`, and a backslash as `\\`. The form always
 * holds a backslash, which no `WorkspacePath` may contain, so it is never taken for a path that is
 * captured or restored, and distinct byte names get distinct forms.
 */

/** The length of the well-formed UTF-8 sequence at `i`, or 0 (the same rules as the native module). */
const sequenceAt = (bytes: Uint8Array, i: number): number => {
  const c = bytes[i]!
  if (c < 0x80) return 1
  let n: number
  let cp: number
  let min: number
  if ((c & 0xe0) === 0xc0) [n, cp, min] = [1, c & 0x1f, 0x80]
  else if ((c & 0xf0) === 0xe0) [n, cp, min] = [2, c & 0x0f, 0x800]
  else if ((c & 0xf8) === 0xf0) [n, cp, min] = [3, c & 0x07, 0x10000]
  else return 0
  for (let k = 1; k <= n; k++) {
    const b = bytes[i + k]
    if (b === undefined || (b & 0xc0) !== 0x80) return 0
    cp = (cp << 6) | (b & 0x3f)
  }
  if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return 0
  return n + 1
}

const decoder = new TextDecoder()

/** The display form of a name that is not UTF-8 (see the header). */
export const escapedName = (bytes: Uint8Array): string => {
  let out = ""
  let i = 0
  while (i < bytes.length) {
    const length = sequenceAt(bytes, i)
    if (length === 0) {
      out += `\\x${bytes[i]!.toString(16).padStart(2, "0")}`
      i += 1
    } else {
      const text = decoder.decode(bytes.subarray(i, i + length))
      out += text === "\\" ? "\\\\" : text
      i += length
    }
  }
  return out
}
