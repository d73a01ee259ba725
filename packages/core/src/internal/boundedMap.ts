/**
 * A map that keeps its `capacity` most recently used entries: a `get` that finds an entry and a
 * `set` make it the newest, and a `set` beyond the capacity drops the oldest. The in-memory caches
 * of core (decoded artifacts, session states, trees' stat caches, compiled and kept ignore rules)
 * share it rather than each keep a copy of the bookkeeping.
 */
export interface BoundedMap<K, V> {
  readonly get: (key: K) => V | undefined
  readonly set: (key: K, value: V) => void
  readonly delete: (key: K) => void
  readonly clear: () => void
}

export const boundedMap = <K, V>(capacity: number): BoundedMap<K, V> => {
  const entries = new Map<K, V>()
  return {
    get: (key) => {
      const value = entries.get(key)
      if (value !== undefined) {
        entries.delete(key)
        entries.set(key, value)
      }
      return value
    },
    set: (key, value) => {
      entries.delete(key)
      entries.set(key, value)
      while (entries.size > capacity) entries.delete(entries.keys().next().value!)
    },
    delete: (key) => {
      entries.delete(key)
    },
    clear: () => entries.clear(),
  }
}
