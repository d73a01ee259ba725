/**
 * The parent-directory test of a subset decode (`Wanted.parents`, layeredMaps.ts) on a path's
 * encoded bytes, so a decoder chooses rows without making a string of each: shared by the manifest
 * (`manifestCodec.ts`, JSON-escaped paths) and the binary stat cache (`statCacheBinary.ts`, UTF-8).
 * A `/` byte (0x2f) never occurs inside a UTF-8 sequence or a JSON escape of one.
 */

/**
 * Whether the path in `bytes[from, to)` lies directly in one of the directories `prefixes` encode:
 * each as its bytes followed by `/`, the root as no bytes at all (a path with no `/`).
 */
export const parentAmong =
  (prefixes: ReadonlyArray<Uint8Array>) =>
  (bytes: Uint8Array, from: number, to: number): boolean => {
    // The last `/` of the path (not `lastIndexOf`, which would search on before it).
    let slash = to - 1
    while (slash >= from && bytes[slash] !== 47) slash--
    for (const prefix of prefixes) {
      if (prefix.length === 0) {
        if (slash < from) return true
        continue
      }
      if (slash !== from + prefix.length - 1) continue
      let same = true
      for (let i = 0; i < prefix.length && same; i++) same = bytes[from + i] === prefix[i]
      if (same) return true
    }
    return false
  }
