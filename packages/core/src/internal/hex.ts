/**
 * Fixed-width entries as lowercase hex and as packed bytes: a seal's tables are stored as bytes and
 * compared as hex (`snapshot/scanSeal.ts`), ten thousand entries and more a capture. A character
 * at a time, not a parsed slice per byte: at four copies of babel that was most of a first
 * capture's work on its tracked table. Entries are what this module and SHA-256 hex give: exactly
 * `2 × width` lowercase hex digits.
 */
const DIGITS = "0123456789abcdef"
const DIGIT_CODES = Uint8Array.from(DIGITS, (c) => c.charCodeAt(0))
const ascii = new TextDecoder("ascii")

/** The value of a lowercase hex digit's character code ('0'-'9' are 48-57, 'a'-'f' 97-102). */
const nibble = (code: number) => (code <= 57 ? code - 48 : code - 87)

/** Entries of `width` bytes each, given as hex, packed in their order. */
export const packHex = (entries: ReadonlyArray<string>, width: number): Uint8Array => {
  const out = new Uint8Array(entries.length * width)
  for (let i = 0; i < entries.length; i++) {
    const entry = entries[i]!
    const at = i * width
    for (let b = 0; b < width; b++)
      out[at + b] = (nibble(entry.charCodeAt(2 * b)) << 4) | nibble(entry.charCodeAt(2 * b + 1))
  }
  return out
}

/** `packHex` undone: each entry of `width` bytes, as hex (one text decoded, then sliced per entry). */
export const unpackHex = (bytes: Uint8Array, width: number): Array<string> => {
  const count = Math.floor(bytes.length / width)
  const chars = new Uint8Array(count * width * 2)
  for (let i = 0; i < chars.length / 2; i++) {
    const b = bytes[i]!
    chars[2 * i] = DIGIT_CODES[b >> 4]!
    chars[2 * i + 1] = DIGIT_CODES[b & 15]!
  }
  const text = ascii.decode(chars)
  const out: Array<string> = new Array(count)
  for (let i = 0; i < count; i++) out[i] = text.slice(2 * width * i, 2 * width * (i + 1))
  return out
}
