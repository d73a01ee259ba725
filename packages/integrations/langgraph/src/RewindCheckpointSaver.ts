/**
 * `RewindCheckpointSaver`: LangGraph's `BaseCheckpointSaver` over Rewind's SessionStore and
 * ArtifactStore ports, so one saver runs on the embedded SQLite store and on PostgreSQL.
 *
 * Layout (see docs/langgraph.md):
 * - one Rewind session stream per thread (`lg-<scope>-<sha256(thread_id) prefix>`), opened by a
 *   SessionCreated so Rewind's own tools list it; every namespace of the thread is in that stream;
 * - each checkpoint is one `GraphCheckpointRecorded` event carrying the checkpoint without its
 *   channel values, its metadata, and the values of the (channel, version) pairs in `newVersions`;
 *   a value is stored once per (channel, version), as a content-addressed (compressed) blob;
 * - each `putWrites` call is one `GraphWritesRecorded` event;
 * - `deleteThread` appends `GraphThreadDeleted`: the thread reads as empty from then on, nothing
 *   is removed, and the blobs only it referred to stop being GC roots (a Rewind cleanup collects
 *   them).
 *
 * Consistency with many workers: every read first folds the events other writers appended since
 * this instance last read the stream (one read after the known version); an append expects the
 * version this instance knows, and a version conflict folds what it missed and retries. Operations on one thread in
 * this process run one at a time (LangGraph writes a superstep's tasks concurrently), so they do not
 * conflict with each other. `scope` partitions one store between applications (and tests): a saver
 * sees only the threads of its scope.
 */
import type { RunnableConfig } from "@langchain/core/runnables"
import {
  BaseCheckpointSaver,
  type ChannelVersions,
  type Checkpoint,
  type CheckpointListOptions,
  type CheckpointMetadata,
  type CheckpointPendingWrite,
  type CheckpointTuple,
  compareWritesSortKeys,
  getCheckpointId,
  maxChannelVersion,
  type PendingWrite,
  type SerializerProtocol,
  TASKS,
  WRITES_IDX_MAP,
  writesSortKey,
} from "@langchain/langgraph-checkpoint"
import {
  GraphCheckpointRecorded,
  GraphThreadDeleted,
  type GraphValue,
  GraphWritesRecorded,
  ID_PATTERN,
  Session,
  SessionCreated,
  type SessionEvent,
  type SessionId,
  type TraceId,
  VersionConflict,
} from "@rewind/contracts"
import { type ArtifactStore, SessionStore } from "@rewind/core"
import { Clock, Effect, Schedule } from "effect"
import { GraphConfigInvalid } from "./errors.js"
import { threadDigest } from "./internal/threadDigest.js"
import {
  emptyThreadState,
  foldEvents,
  type NamespaceState,
  newestFirst,
  type StoredWrite,
  type ThreadState,
  versionKey,
} from "./internal/threadState.js"
import { BlobCache, loadValues, type Serialized, storeValues } from "./internal/values.js"

/** The ports the saver runs on. */
export type SaverServices = SessionStore | ArtifactStore

/** Runs the saver's programs (a ManagedRuntime, or the runtime of an Effect host). */
export interface SaverRuntime {
  readonly run: <A, E>(effect: Effect.Effect<A, E, SaverServices>) => Promise<A>
  /** Releases what the runtime holds (the database); called by `close`. */
  readonly dispose: () => Promise<void>
}

export interface SaverOptions {
  /** Partitions the store: a saver sees only threads of its scope. Letters, digits, `._:`; default "default". */
  readonly scope?: string
  /** The serializer (LangGraph's JsonPlusSerializer when omitted). */
  readonly serde?: SerializerProtocol
  /** Bytes of recent values kept in memory (default 32 MiB); blobs never change, so it is always safe. */
  readonly cacheBytes?: number
  /**
   * Compress blobs before storing them (default true). Turn it off over a store that compresses
   * its blobs itself (the SQLite store: `openSqliteSaver` does).
   */
  readonly compress?: boolean
}

const SCOPE_PATTERN = /^[A-Za-z0-9._:]{1,40}$/
const PREFIX = "lg-"
const CONFLICT_RETRIES = Schedule.recurs(20)

interface ThreadHandle {
  readonly sessionId: SessionId
  readonly state: ThreadState
  readonly lock: Effect.Semaphore
}

const invalid = (operation: string, message: string) => new GraphConfigInvalid({ operation, message })

const stringField = (config: RunnableConfig, key: string): string | undefined => {
  const value: unknown = config.configurable?.[key]
  if (value === undefined || value === null) return undefined
  if (typeof value === "string") return value
  if (typeof value === "number") return String(value)
  return undefined
}

const threadIdOf = (config: RunnableConfig, operation: string) =>
  Effect.suspend(() => {
    if (config.configurable === undefined || config.configurable === null)
      return Effect.fail(invalid(operation, `${operation}: the config has no "configurable" property`))
    const id = stringField(config, "thread_id")
    return id === undefined || id === ""
      ? Effect.fail(
          invalid(
            operation,
            `${operation}: config.configurable.thread_id is missing (pass { configurable: { thread_id } } so the saver knows which thread to keep)`,
          ),
        )
      : Effect.succeed(id)
  })

const metadataMatches = (metadata: Record<string, unknown>, filter: Record<string, unknown>): boolean =>
  Object.entries(filter).every(([key, value]) => deepEqual(metadata[key], value))

const deepEqual = (a: unknown, b: unknown): boolean => {
  if (a === b) return true
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false
  if (Array.isArray(a) !== Array.isArray(b)) return false
  const ka = Object.keys(a)
  const kb = Object.keys(b)
  return (
    ka.length === kb.length &&
    ka.every((k) => deepEqual((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]))
  )
}

export class RewindCheckpointSaver extends BaseCheckpointSaver<number> {
  readonly scope: string
  private readonly runtime: SaverRuntime
  private readonly compress: boolean
  private readonly threads = new Map<string, ThreadHandle>()
  private readonly cache: BlobCache
  private closed = false

  constructor(runtime: SaverRuntime, options: SaverOptions = {}) {
    super(options.serde)
    const scope = options.scope ?? "default"
    if (!SCOPE_PATTERN.test(scope))
      throw invalid("constructor", `scope ${JSON.stringify(scope)} must be 1-40 letters, digits and . _ :`)
    this.scope = scope
    this.runtime = runtime
    this.compress = options.compress ?? true
    this.cache = new BlobCache(options.cacheBytes ?? 32 * 1024 * 1024)
  }

  /** The Rewind session id of a thread in this saver's scope. */
  sessionIdOf(threadId: string): SessionId {
    const digest = threadDigest(threadId)
    const id = `${PREFIX}${this.scope}-${digest}`
    if (!ID_PATTERN.test(id)) throw invalid("sessionIdOf", `no session id for scope ${this.scope}`)
    return id as SessionId
  }

  /** Resolves once the store is open (rejects with the store's error when it cannot be). */
  async ready(): Promise<void> {
    await this.run(Effect.asVoid(SessionStore))
  }

  /** Releases the store (when the saver opened it). Calls after it reject. */
  async close(): Promise<void> {
    if (this.closed) return
    this.closed = true
    await this.runtime.dispose()
  }

  private run<A, E>(effect: Effect.Effect<A, E, SaverServices>): Promise<A> {
    if (this.closed) return Promise.reject(invalid("run", "the saver is closed"))
    return this.runtime.run(effect)
  }

  private handle(threadId: string): Effect.Effect<ThreadHandle> {
    return Effect.suspend(() => {
      const known = this.threads.get(threadId)
      if (known !== undefined) return Effect.succeed(known)
      return Effect.map(Effect.makeSemaphore(1), (lock) => {
        // Another fiber may have made it meanwhile: keep the first.
        const again = this.threads.get(threadId)
        if (again !== undefined) return again
        const made: ThreadHandle = { sessionId: this.sessionIdOf(threadId), state: emptyThreadState(), lock }
        this.threads.set(threadId, made)
        return made
      })
    })
  }

  /** Folds what other writers appended since this instance last read the thread. */
  private sync(handle: ThreadHandle) {
    return Effect.gen(function* () {
      const store = yield* SessionStore
      const events = yield* store.read(handle.sessionId, { afterSequence: handle.state.version })
      foldEvents(handle.state, events)
      return handle.state
    })
  }

  /**
   * Appends events (with SessionCreated first on a new stream) at the version this instance knows,
   * without reading first: when another writer moved the stream on, the append conflicts, and the
   * retry reads what it missed and decides again. One writer per thread (the usual case) pays no
   * read per put.
   */
  private append(handle: ThreadHandle, threadId: string, make: () => ReadonlyArray<SessionEvent>) {
    const self = this
    let attempts = 0
    return Effect.gen(function* () {
      const store = yield* SessionStore
      const state = attempts++ === 0 ? handle.state : yield* self.sync(handle)
      const at = yield* Clock.currentTimeMillis
      const events: Array<SessionEvent> = []
      if (!state.created && state.version === 0)
        events.push(self.sessionCreated(handle.sessionId, threadId, at))
      events.push(...make())
      const expectedVersion = state.version
      const { version } = yield* store.append({ sessionId: handle.sessionId, expectedVersion, events, at })
      // A concurrent read may already have folded these; the fold skips what it has.
      if (version === expectedVersion + events.length)
        foldEvents(
          state,
          events.map((event, i) => ({
            sessionId: handle.sessionId,
            sequence: expectedVersion + i + 1,
            at,
            event,
          })),
        )
      else yield* self.sync(handle)
    }).pipe(
      Effect.retry({ schedule: CONFLICT_RETRIES, while: (e) => e instanceof VersionConflict }),
      handle.lock.withPermits(1),
    )
  }

  private sessionCreated(sessionId: SessionId, threadId: string, at: number) {
    const shown = threadId.length > 80 ? `${threadId.slice(0, 80)}…` : threadId
    return new SessionCreated({
      session: new Session({
        id: sessionId,
        rootTraceId: sessionId as string as TraceId,
        kind: "main",
        title: `LangGraph thread ${shown}`,
        cwd: "",
        createdAt: at,
      }),
    })
  }

  private serialize(value: unknown): Effect.Effect<Serialized> {
    return Effect.promise(async () => {
      const [type, bytes] = await this.serde.dumpsTyped(value)
      return { type, bytes }
    })
  }

  private deserialize(value: Serialized): Effect.Effect<unknown> {
    return Effect.promise(() => this.serde.loadsTyped(value.type, value.bytes))
  }

  /** Builds the tuple of one stored checkpoint. */
  private tupleOf(threadId: string, namespace: string, ns: NamespaceState, record: GraphCheckpointRecorded) {
    const self = this
    return Effect.gen(function* () {
      const checkpointBase = yield* loadValues([record.checkpoint, record.metadata], self.cache)
      const checkpoint = (yield* self.deserialize(checkpointBase[0]!)) as Checkpoint
      const metadata = (yield* self.deserialize(checkpointBase[1]!)) as CheckpointMetadata
      // Channel values: each channel's value at the version this checkpoint names.
      const channels: Array<[string, GraphValue]> = []
      for (const [channel, version] of Object.entries(checkpoint.channel_versions ?? {})) {
        const value = ns.values.get(versionKey(channel, version))
        if (value !== undefined && value !== null) channels.push([channel, value])
      }
      const writes = orderedWrites(ns.writes.get(record.checkpointId))
      const loaded = yield* loadValues(
        [...channels.map(([, v]) => v), ...writes.map((w) => w.value)],
        self.cache,
      )
      const channelValues: Record<string, unknown> = {}
      for (let i = 0; i < channels.length; i++)
        channelValues[channels[i]![0]] = yield* self.deserialize(loaded[i]!)
      const pendingWrites: Array<CheckpointPendingWrite> = []
      for (let i = 0; i < writes.length; i++)
        pendingWrites.push([
          writes[i]!.taskId,
          writes[i]!.channel,
          yield* self.deserialize(loaded[channels.length + i]!),
        ])
      checkpoint.channel_values = channelValues
      if (checkpoint.v < 4 && record.parentCheckpointId !== undefined)
        yield* self.migratePendingSends(checkpoint, ns, record.parentCheckpointId)
      const tuple: CheckpointTuple = {
        config: {
          configurable: { thread_id: threadId, checkpoint_ns: namespace, checkpoint_id: record.checkpointId },
        },
        checkpoint,
        metadata,
        pendingWrites,
      }
      if (record.parentCheckpointId !== undefined)
        tuple.parentConfig = {
          configurable: {
            thread_id: threadId,
            checkpoint_ns: namespace,
            checkpoint_id: record.parentCheckpointId,
          },
        }
      return tuple
    })
  }

  /** Checkpoints before format 4 kept pending sends as the parent's TASKS writes: move them in. */
  private migratePendingSends(checkpoint: Checkpoint, ns: NamespaceState, parentId: string) {
    const self = this
    return Effect.gen(function* () {
      const sends = orderedWrites(ns.writes.get(parentId)).filter((w) => w.channel === TASKS)
      if (sends.length === 0) return
      const loaded = yield* loadValues(
        sends.map((w) => w.value),
        self.cache,
      )
      const values: Array<unknown> = []
      for (const value of loaded) values.push(yield* self.deserialize(value))
      checkpoint.channel_values[TASKS] = values
      const versions = Object.values(checkpoint.channel_versions)
      checkpoint.channel_versions = {
        ...checkpoint.channel_versions,
        [TASKS]: versions.length > 0 ? maxChannelVersion(...versions) : self.getNextVersion(undefined),
      }
    })
  }

  async getTuple(config: RunnableConfig): Promise<CheckpointTuple | undefined> {
    const self = this
    return this.run(
      Effect.gen(function* () {
        const threadId = stringField(config, "thread_id")
        if (threadId === undefined) return undefined
        const namespace = stringField(config, "checkpoint_ns") ?? ""
        const handle = yield* self.handle(threadId)
        const state = yield* self.sync(handle)
        const ns = state.namespaces.get(namespace)
        if (ns === undefined) return undefined
        const id = getCheckpointId(config) || newestFirst(ns)[0]
        const record = id === undefined ? undefined : ns.checkpoints.get(id)
        if (record === undefined) return undefined
        return yield* self.tupleOf(threadId, namespace, ns, record)
      }),
    )
  }

  async *list(config: RunnableConfig, options?: CheckpointListOptions): AsyncGenerator<CheckpointTuple> {
    const self = this
    const { before, limit, filter } = options ?? {}
    const threadFilter = stringField(config, "thread_id")
    const namespaceFilter = stringField(config, "checkpoint_ns")
    const idFilter = getCheckpointId(config)
    const beforeId = before === undefined ? "" : getCheckpointId(before)
    // Candidates are found in one pass (records only); their values are read as they are yielded.
    const candidates = await this.run(
      Effect.gen(function* () {
        const threadIds = threadFilter !== undefined ? [threadFilter] : yield* self.threadIds()
        const found: Array<{
          threadId: string
          namespace: string
          ns: NamespaceState
          record: GraphCheckpointRecorded
        }> = []
        for (const threadId of threadIds) {
          const state = yield* self.sync(yield* self.handle(threadId))
          for (const [namespace, ns] of state.namespaces) {
            if (namespaceFilter !== undefined && namespace !== namespaceFilter) continue
            for (const id of newestFirst(ns)) {
              if (idFilter !== "" && id !== idFilter) continue
              if (beforeId !== "" && id >= beforeId) continue
              found.push({ threadId, namespace, ns, record: ns.checkpoints.get(id)! })
            }
          }
        }
        return found.sort((a, b) => (a.record.checkpointId < b.record.checkpointId ? 1 : -1))
      }),
    )
    let remaining = limit ?? Number.POSITIVE_INFINITY
    for (const c of candidates) {
      if (remaining <= 0) return
      if (filter !== undefined && Object.keys(filter).length > 0) {
        const [metadata] = await this.run(loadValues([c.record.metadata], this.cache))
        const decoded = (await this.serde.loadsTyped(metadata!.type, metadata!.bytes)) as Record<
          string,
          unknown
        >
        if (!metadataMatches(decoded ?? {}, filter)) continue
      }
      remaining -= 1
      yield await this.run(this.tupleOf(c.threadId, c.namespace, c.ns, c.record))
    }
  }

  /** The thread ids of this scope that the store holds (streams opened by a saver of this scope). */
  private threadIds() {
    const self = this
    return Effect.gen(function* () {
      const store = yield* SessionStore
      const prefix = `${PREFIX}${self.scope}-`
      const sessions = yield* store.listSessions()
      const out: Array<string> = []
      const byId = new Map<string, string>()
      for (const [threadId, handle] of self.threads) byId.set(handle.sessionId, threadId)
      for (const s of sessions) {
        if (!s.sessionId.startsWith(prefix)) continue
        const known = byId.get(s.sessionId)
        if (known !== undefined) {
          out.push(known)
          continue
        }
        // A thread another worker opened: its id is in its events, which are folded right away so
        // the listing does not read the stream a second time.
        const events = yield* store.read(s.sessionId)
        const first = events.find(
          (e) => e.event._tag === "GraphCheckpointRecorded" || e.event._tag === "GraphThreadDeleted",
        )?.event as GraphCheckpointRecorded | GraphThreadDeleted | undefined
        if (first === undefined || self.sessionIdOf(first.threadId) !== s.sessionId) continue
        foldEvents((yield* self.handle(first.threadId)).state, events)
        out.push(first.threadId)
      }
      return out
    })
  }

  async put(
    config: RunnableConfig,
    checkpoint: Checkpoint,
    metadata: CheckpointMetadata,
    newVersions: ChannelVersions,
  ): Promise<RunnableConfig> {
    const self = this
    return this.run(
      Effect.gen(function* () {
        const threadId = yield* threadIdOf(config, "put")
        const namespace = stringField(config, "checkpoint_ns") ?? ""
        const parentCheckpointId = stringField(config, "checkpoint_id") || undefined
        if (typeof checkpoint?.id !== "string" || checkpoint.id === "")
          return yield* Effect.fail(invalid("put", "put: the checkpoint has no id"))
        const { channel_values: values, ...rest } = checkpoint
        const channels = Object.entries(newVersions ?? {})
        const present = channels.filter(([channel]) => values !== undefined && Object.hasOwn(values, channel))
        const serialized = [
          yield* self.serialize({ ...rest, channel_values: {} }),
          yield* self.serialize(metadata),
          ...(yield* Effect.forEach(present, ([channel]) => self.serialize(values[channel]))),
        ]
        const refs = yield* storeValues(
          serialized,
          serialized.map((_, i) => i < 2),
          self.compress,
          self.cache,
        )
        const stored = new Map(present.map(([channel], i) => [channel, refs[i + 2]!]))
        const handle = yield* self.handle(threadId)
        yield* self.append(handle, threadId, () => [
          new GraphCheckpointRecorded({
            threadId,
            namespace,
            checkpointId: checkpoint.id,
            parentCheckpointId,
            checkpoint: refs[0]!,
            metadata: refs[1]!,
            channels: channels.map(([channel, version]) => ({
              channel,
              version,
              value: stored.get(channel),
            })),
          }),
        ])
        return {
          configurable: { thread_id: threadId, checkpoint_ns: namespace, checkpoint_id: checkpoint.id },
        }
      }),
    )
  }

  async putWrites(
    config: RunnableConfig,
    writes: Array<PendingWrite>,
    taskId: string,
    taskPath?: string,
  ): Promise<void> {
    const self = this
    return this.run(
      Effect.gen(function* () {
        const threadId = yield* threadIdOf(config, "putWrites")
        const checkpointId = stringField(config, "checkpoint_id")
        if (checkpointId === undefined || checkpointId === "")
          return yield* Effect.fail(
            invalid(
              "putWrites",
              "putWrites: config.configurable.checkpoint_id is missing (writes belong to a checkpoint)",
            ),
          )
        if (typeof taskId !== "string")
          return yield* Effect.fail(invalid("putWrites", "putWrites: taskId must be a string"))
        const namespace = stringField(config, "checkpoint_ns") ?? ""
        if (writes.length === 0) return
        const serialized = yield* Effect.forEach(writes, ([, value]) => self.serialize(value))
        const refs = yield* storeValues(
          serialized,
          serialized.map(() => true),
          self.compress,
          self.cache,
        )
        const handle = yield* self.handle(threadId)
        yield* self.append(handle, threadId, () => [
          new GraphWritesRecorded({
            namespace,
            checkpointId,
            taskId,
            taskPath: taskPath ?? "",
            writes: writes.map(([channel], idx) => ({
              idx: WRITES_IDX_MAP[channel] ?? idx,
              channel,
              value: refs[idx]!,
            })),
          }),
        ])
      }),
    )
  }

  /**
   * Makes the thread unreachable: every namespace of it reads as empty from now on (a later `put`
   * starts it afresh). Append-only: the records stay in the stream, and the blobs only this thread
   * referred to stop being GC roots, so a Rewind cleanup (`rewind cleanup`) collects them.
   */
  async deleteThread(threadId: string): Promise<void> {
    const self = this
    return this.run(
      Effect.gen(function* () {
        if (typeof threadId !== "string" || threadId === "")
          return yield* Effect.fail(
            invalid("deleteThread", "deleteThread: the thread id must be a non-empty string"),
          )
        const handle = yield* self.handle(threadId)
        const state = yield* self.sync(handle)
        if (state.version === 0 || state.namespaces.size === 0) return
        yield* self.append(handle, threadId, () => [new GraphThreadDeleted({ threadId })])
      }),
    )
  }

  /**
   * Channel versions are integers counting up from 1. A string version (a thread written by a
   * saver that uses them, such as `"00000000000000000000000000000003.0.42"`) continues from its
   * leading integer.
   */
  override getNextVersion(current: number | undefined): number {
    if (current === undefined) return 1
    const n = typeof current === "number" ? current : Number.parseInt(String(current), 10)
    return Number.isFinite(n) ? Math.floor(n) + 1 : 1
  }
}

const orderedWrites = (writes: ReadonlyMap<string, StoredWrite> | undefined): ReadonlyArray<StoredWrite> =>
  writes === undefined
    ? []
    : [...writes.values()].sort((a, b) =>
        compareWritesSortKeys(
          writesSortKey(a.taskPath, a.taskId, a.idx),
          writesSortKey(b.taskPath, b.taskId, b.idx),
        ),
      )
