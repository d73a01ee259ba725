/**
 * The in-memory projection of one thread's stream: its namespaces, their checkpoints, the value of
 * each (channel, version) and the pending writes of each checkpoint. Built by folding the stream's
 * events in order and kept up to date by folding only the events after `version`, so a saver
 * instance reads each event once however many workers append to the stream.
 *
 * Fold rules (the same for every reader, since they follow the stream's order):
 * - a checkpoint put again under the same id replaces the earlier record (its writes are kept);
 * - a write is keyed by (task id, index): a regular write (index ≥ 0) already recorded is kept,
 *   a special one (negative index: error, interrupt, …) is replaced by the newer one;
 * - `GraphThreadDeleted` forgets everything recorded before it.
 */
import type {
  GraphChannelVersion,
  GraphCheckpointRecorded,
  GraphValue,
  GraphWritesRecorded,
  StoredEvent,
} from "@rewind/contracts"

export interface StoredWrite {
  readonly taskId: string
  readonly taskPath: string
  readonly idx: number
  readonly channel: string
  readonly value: GraphValue
}

export interface NamespaceState {
  readonly checkpoints: Map<string, GraphCheckpointRecorded>
  /** `versionKey(channel, version)` → the value, or null for a channel empty at that version. */
  readonly values: Map<string, GraphValue | null>
  /** checkpoint id → `${taskId}\u0000${idx}` → write. */
  readonly writes: Map<string, Map<string, StoredWrite>>
  /** Checkpoint ids newest first; rebuilt lazily after a put. */
  sorted: Array<string> | undefined
}

export interface ThreadState {
  /** The stream's version this state includes (0: nothing read yet). */
  version: number
  /** Whether the stream has its SessionCreated. */
  created: boolean
  readonly namespaces: Map<string, NamespaceState>
}

export const emptyThreadState = (): ThreadState => ({ version: 0, created: false, namespaces: new Map() })

/** One key per (channel, version); the version's type is part of it (1 and "1" differ). */
export const versionKey = (channel: string, version: GraphChannelVersion) =>
  `${channel}\u0000${typeof version === "number" ? "n" : "s"}${String(version)}`

const namespaceOf = (state: ThreadState, namespace: string): NamespaceState => {
  let ns = state.namespaces.get(namespace)
  if (ns === undefined) {
    ns = { checkpoints: new Map(), values: new Map(), writes: new Map(), sorted: undefined }
    state.namespaces.set(namespace, ns)
  }
  return ns
}

const applyCheckpoint = (state: ThreadState, event: GraphCheckpointRecorded) => {
  const ns = namespaceOf(state, event.namespace)
  if (!ns.checkpoints.has(event.checkpointId)) ns.sorted = undefined
  ns.checkpoints.set(event.checkpointId, event)
  for (const c of event.channels) ns.values.set(versionKey(c.channel, c.version), c.value ?? null)
}

const applyWrites = (state: ThreadState, event: GraphWritesRecorded) => {
  const ns = namespaceOf(state, event.namespace)
  let writes = ns.writes.get(event.checkpointId)
  if (writes === undefined) {
    writes = new Map()
    ns.writes.set(event.checkpointId, writes)
  }
  for (const w of event.writes) {
    const key = `${event.taskId}\u0000${w.idx}`
    if (w.idx >= 0 && writes.has(key)) continue
    writes.set(key, {
      taskId: event.taskId,
      taskPath: event.taskPath,
      idx: w.idx,
      channel: w.channel,
      value: w.value,
    })
  }
}

/** Folds events (in stream order, after `state.version`) into the state, in place. */
export const foldEvents = (state: ThreadState, events: ReadonlyArray<StoredEvent>): void => {
  for (const { sequence, event } of events) {
    if (sequence <= state.version) continue
    switch (event._tag) {
      case "SessionCreated":
        state.created = true
        break
      case "GraphCheckpointRecorded":
        applyCheckpoint(state, event)
        break
      case "GraphWritesRecorded":
        applyWrites(state, event)
        break
      case "GraphThreadDeleted":
        state.namespaces.clear()
        break
    }
    state.version = sequence
  }
}

/** The namespace's checkpoint ids, newest first (ids are time-ordered uuid6 strings). */
export const newestFirst = (ns: NamespaceState): ReadonlyArray<string> => {
  if (ns.sorted === undefined)
    ns.sorted = [...ns.checkpoints.keys()].sort((a, b) => (a < b ? 1 : a > b ? -1 : 0))
  return ns.sorted
}
