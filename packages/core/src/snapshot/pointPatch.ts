/**
 * A point built as a patch of its base: the base's manifest and stat cache with the paths a
 * capture re-examined replaced (an overlay, not a copy of the tree), and its counts moved by what
 * changed at those paths. Shared by the captures that know where the tree can differ from the base
 * point's: the live engine's (`liveCapture.ts`) and the seal's (`sealedCapture.ts`).
 */
import type { PointCaptured, WorkspacePath } from "@rewind/contracts"
import { overlaid } from "./overlayMap.js"
import type { ManifestEntry } from "./pointManifest.js"

const countOf = (entry: ManifestEntry | undefined) =>
  entry === undefined
    ? { files: 0, links: 0, tombstones: 0, bytes: 0 }
    : entry.kind === "file"
      ? { files: 1, links: 0, tombstones: 0, bytes: entry.size }
      : entry.kind === "link"
        ? { files: 0, links: 1, tombstones: 0, bytes: 0 }
        : { files: 0, links: 0, tombstones: 1, bytes: 0 }

/** `map` with the paths of `affected` replaced by `next`'s entries (removed where it has none). */
export const patched = <V>(
  map: ReadonlyMap<WorkspacePath, V>,
  next: ReadonlyMap<WorkspacePath, V>,
  affected: ReadonlySet<WorkspacePath>,
  same: (a: V, b: V | undefined) => boolean,
): ReadonlyMap<WorkspacePath, V> => {
  let differs = false
  for (const path of affected) {
    const now = next.get(path)
    const before = map.get(path)
    if (now === undefined ? before !== undefined : !same(now, before)) {
      differs = true
      break
    }
  }
  // Unchanged: the very map, so nothing per path is copied or compared again.
  if (!differs) return map
  // An overlay of the changes, not a copy of the tree (`overlayMap.ts`).
  const updates = new Map<WorkspacePath, V | undefined>()
  for (const path of affected) updates.set(path, next.get(path))
  return overlaid(map, updates)
}

/** The base point's counts, moved by what changed at the affected paths. */
export const countsOver = (
  base: Pick<PointCaptured, "files" | "links" | "tombstones" | "bytes">,
  previous: ReadonlyMap<WorkspacePath, ManifestEntry>,
  manifest: ReadonlyMap<WorkspacePath, ManifestEntry>,
  affected: Iterable<WorkspacePath>,
) => {
  const counts = { files: base.files, links: base.links, tombstones: base.tombstones, bytes: base.bytes }
  for (const path of affected) {
    const before = countOf(previous.get(path))
    const after = countOf(manifest.get(path))
    counts.files += after.files - before.files
    counts.links += after.links - before.links
    counts.tombstones += after.tombstones - before.tombstones
    counts.bytes += after.bytes - before.bytes
  }
  return counts
}
