/**
 * A read-only map made of a root map and a small map of changes over it: what a watched capture
 * builds its manifest and stat cache as. Copying a 27,674-entry Map per capture took tens of
 * milliseconds in a large process — more than the rest of a one-file capture — so a capture
 * that changed k paths makes an overlay of its k changes instead (plus the changes of the overlays
 * before it: the root stays the same map, the changes are merged, O(changes)). When the changes
 * grow past an eighth of the root, the overlay is flattened into a new root (O(n), once per n/8
 * changed paths). Never mutated after it is made: the maps it holds are shared, read-only, and
 * cached by content hash like any decoded manifest.
 */
const REMOVED: unique symbol = Symbol("removed")
type Change<V> = V | typeof REMOVED

class OverlayMap<K, V> implements ReadonlyMap<K, V> {
  readonly size: number
  constructor(
    readonly root: ReadonlyMap<K, V>,
    readonly changes: ReadonlyMap<K, Change<V>>,
  ) {
    let size = root.size
    for (const [key, change] of changes) {
      const before = root.has(key)
      if (change === REMOVED) {
        if (before) size--
      } else if (!before) size++
    }
    this.size = size
  }
  get(key: K): V | undefined {
    const change = this.changes.get(key)
    if (change !== undefined) return change === REMOVED ? undefined : change
    return this.root.get(key)
  }
  has(key: K): boolean {
    const change = this.changes.get(key)
    return change !== undefined ? change !== REMOVED : this.root.has(key)
  }
  *entries(): MapIterator<[K, V]> {
    for (const [key, value] of this.root) {
      const change = this.changes.get(key)
      if (change === undefined) yield [key, value]
      else if (change !== REMOVED) yield [key, change]
    }
    for (const [key, change] of this.changes)
      if (change !== REMOVED && !this.root.has(key)) yield [key, change]
  }
  *keys(): MapIterator<K> {
    for (const [key] of this.entries()) yield key
  }
  *values(): MapIterator<V> {
    for (const [, value] of this.entries()) yield value
  }
  [Symbol.iterator](): MapIterator<[K, V]> {
    return this.entries()
  }
  forEach(callback: (value: V, key: K, map: ReadonlyMap<K, V>) => void): void {
    for (const [key, value] of this.entries()) callback(value, key, this)
  }
}

/**
 * `map` with `updates` applied (an undefined value removes the key), sharing `map`'s root.
 * `map` itself is left as it is.
 */
export const overlaid = <K, V>(
  map: ReadonlyMap<K, V>,
  updates: ReadonlyMap<K, V | undefined>,
): ReadonlyMap<K, V> => {
  const root = map instanceof OverlayMap ? (map.root as ReadonlyMap<K, V>) : map
  const changes = new Map<K, Change<V>>(
    map instanceof OverlayMap ? (map.changes as ReadonlyMap<K, Change<V>>) : [],
  )
  for (const [key, value] of updates) changes.set(key, value === undefined ? REMOVED : value)
  const next = new OverlayMap(root, changes)
  return changes.size > 1_024 + (root.size >> 3) ? new Map(next) : next
}
