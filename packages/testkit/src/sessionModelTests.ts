/**
 * Model-based tests of the conversation invariants (DESIGN §9, 1 and 2) against any SessionStore.
 *
 * fast-check generates command sequences (append user / assistant / system messages, compact,
 * start / finish / fail-to-stop background tasks, rewind, read); each runs against the real
 * programs on the given store and against `SessionModel`, and after every command the store must
 * still hold every earlier event unchanged and the active branch must equal the model's.
 */
import {
  encodeEvent,
  type MessageId,
  Refused,
  type SessionId,
  type TaskId,
  type TurnId,
} from "@rewind/contracts"
import {
  appendReply,
  appendUserMessage,
  applyCompaction,
  type BackgroundTasks,
  branchView,
  createSession,
  finishBackgroundTask,
  type IdGenerator,
  IdGenerators,
  loadSession,
  rewindConversation,
  SessionStore,
  startBackgroundTask,
} from "@rewind/core"
import { Effect, FastCheck as fc, Layer, ManagedRuntime } from "effect"
import { layerScriptedTasks, ScriptedTasks } from "./scriptedBackgroundTasks.js"
import { type Prediction, SessionModel } from "./sessionModel.js"
import { layerSteppingClock } from "./steppingClock.js"

type Services = SessionStore | BackgroundTasks | ScriptedTasks | IdGenerator

interface Real {
  readonly runtime: ManagedRuntime.ManagedRuntime<Services, unknown>
  readonly sessionId: SessionId
  /** The encoded events seen so far: the store must keep them unchanged (append-only). */
  seen: Array<string>
}

const run = <A>(real: Real, effect: Effect.Effect<A, unknown, Services>): Promise<A> =>
  real.runtime.runPromise(effect)

/** Runs an effect and returns its value or the refusal kind; any other failure fails the test. */
const attempt = <A>(real: Real, effect: Effect.Effect<A, unknown, Services>): Promise<Prediction<A>> =>
  run(
    real,
    effect.pipe(
      Effect.map((value): Prediction<A> => ({ ok: true, value })),
      Effect.catchIf(
        (e): e is Refused => e instanceof Refused,
        (e) => Effect.succeed<Prediction<A>>({ ok: false, kind: e.kind }),
      ),
    ),
  )

const expectSame = (what: string, actual: unknown, expected: unknown) => {
  const a = JSON.stringify(actual)
  const e = JSON.stringify(expected)
  if (a !== e) throw new Error(`${what}: expected ${e}, got ${a}`)
}

const outcomeKind = (p: Prediction<unknown>): string => (p.ok ? "ok" : p.kind)

/** Invariants 1 and 2, checked from a cold read of the store after every command. */
const checkInvariants = async (model: SessionModel, real: Real) => {
  const events = await run(
    real,
    Effect.flatMap(SessionStore, (s) => s.read(real.sessionId)),
  )
  const encoded = events.map((e) => JSON.stringify(encodeEvent(e.event)))
  events.forEach((e, i) => {
    if (e.sequence !== i + 1)
      throw new Error(`sequence ${e.sequence} at position ${i + 1}: the stream has a gap`)
  })
  if (encoded.length < real.seen.length)
    throw new Error("events disappeared from the stream (append-only violated)")
  for (let i = 0; i < real.seen.length; i++) {
    if (encoded[i] !== real.seen[i])
      throw new Error(`event ${i + 1} changed after it was appended (append-only violated)`)
  }
  real.seen = encoded

  const state = await run(real, loadSession(real.sessionId))
  const view = branchView(state)
  expectSame("active branch", view.messageIds, model.active)
  expectSame("model history", view.modelHistory, model.modelHistory())
  expectSame("branch generation", state.branchGeneration, model.generation)
  const resurfaced = view.messageIds.filter((id) => model.everCut.has(id))
  if (resurfaced.length > 0) throw new Error(`cut messages resurfaced: ${resurfaced.join(", ")}`)
  expectSame("every message kept", state.messageOrder, model.all)
}

abstract class ModelCommand implements fc.AsyncCommand<SessionModel, Real> {
  abstract check(model: Readonly<SessionModel>): boolean
  abstract apply(model: SessionModel, real: Real): Promise<void>
  abstract toString(): string
  async run(model: SessionModel, real: Real): Promise<void> {
    await this.apply(model, real)
    await checkInvariants(model, real)
  }
}

class AppendUser extends ModelCommand {
  check = () => true
  async apply(model: SessionModel, real: Real) {
    const r = await run(real, appendUserMessage(real.sessionId, { text: "question" }))
    model.append(r.messageId, "user", r.turnId)
  }
  toString = () => "AppendUser"
}

class AppendReply extends ModelCommand {
  constructor(
    readonly role: "assistant" | "system",
    readonly status: "ok" | "error",
  ) {
    super()
  }
  check = (model: Readonly<SessionModel>) => model.lastActiveTurn() !== undefined
  async apply(model: SessionModel, real: Real) {
    const turn = model.lastActiveTurn()!
    const r = await run(
      real,
      appendReply(real.sessionId, {
        turnId: turn as TurnId,
        role: this.role,
        status: this.status,
        parts: [{ kind: "text", text: `${this.role} says ${this.status}` }],
      }),
    )
    model.append(r.messageId, this.role, turn)
  }
  toString = () => `AppendReply(${this.role}, ${this.status})`
}

class Compact extends ModelCommand {
  constructor(
    readonly start: number,
    readonly span: number,
  ) {
    super()
  }
  check = (model: Readonly<SessionModel>) => model.active.length >= 2
  async apply(model: SessionModel, real: Real) {
    const n = model.active.length
    const from = Math.floor(this.start * n)
    const to = from + Math.floor(this.span * (n - from))
    const predicted = model.predictCompaction(from, to)
    const actual = await attempt(
      real,
      applyCompaction(real.sessionId, {
        fromMessageId: model.active[from] as MessageId,
        toMessageId: model.active[to] as MessageId,
        summaryText: "summary",
      }),
    )
    expectSame(`compaction ${from}..${to}`, outcomeKind(actual), outcomeKind(predicted))
    if (actual.ok) model.compact(actual.value.summaryMessageId, model.active[from]!, model.active[to]!)
  }
  toString = () => `Compact(${this.start.toFixed(2)}, ${this.span.toFixed(2)})`
}

class StartTask extends ModelCommand {
  constructor(
    readonly turnPick: number,
    readonly refuses: boolean,
  ) {
    super()
  }
  check = (model: Readonly<SessionModel>) => model.lastActiveTurn() !== undefined
  async apply(model: SessionModel, real: Real) {
    const turns = [
      ...new Set(
        model.active.filter((id) => model.role.get(id) === "user").map((id) => model.turnOf.get(id)!),
      ),
    ]
    const turn = turns[Math.floor(this.turnPick * turns.length)]!
    const r = await run(
      real,
      Effect.gen(function* () {
        const started = yield* startBackgroundTask(real.sessionId, turn as TurnId, "task")
        ;(yield* ScriptedTasks).script(started.taskId, false)
        return started
      }),
    )
    if (this.refuses)
      await run(
        real,
        Effect.map(ScriptedTasks, (t) => t.script(r.taskId, true)),
      )
    model.tasks.set(r.taskId, {
      turn,
      refuses: this.refuses,
      generation: model.generation,
      status: "running",
    })
  }
  toString = () => `StartTask(${this.turnPick.toFixed(2)}, refuses=${this.refuses})`
}

class FinishTask extends ModelCommand {
  constructor(
    readonly pick: number,
    readonly outcome: "completed" | "failed",
  ) {
    super()
  }
  check = (model: Readonly<SessionModel>) => model.tasks.size > 0
  async apply(model: SessionModel, real: Real) {
    const ids = [...model.tasks.keys()]
    const taskId = ids[Math.floor(this.pick * ids.length)]!
    const predicted = model.predictFinish(taskId)
    const r = await run(real, finishBackgroundTask(real.sessionId, taskId as TaskId, this.outcome))
    expectSame(`finish ${taskId}`, r.accepted ? "accepted" : r.reason, predicted)
    if (r.accepted) model.tasks.get(taskId)!.status = this.outcome
  }
  toString = () => `FinishTask(${this.pick.toFixed(2)}, ${this.outcome})`
}

class Rewind extends ModelCommand {
  constructor(
    readonly pick: number,
    readonly scope: "conversation" | "both",
    readonly unknownTarget: boolean,
    readonly fromActive: boolean,
  ) {
    super()
  }
  check = (model: Readonly<SessionModel>) => model.all.length > 0
  async apply(model: SessionModel, real: Real) {
    // Half the picks come from the active branch, so successful rewinds (and rewinds after
    // rewinds) are common; the other half roam over every message, cut branches included.
    const pool = this.fromActive && model.active.length > 0 ? model.active : model.all
    const id = this.unknownTarget ? "no-such-message" : pool[Math.floor(this.pick * pool.length)]!
    const predicted = model.predictRewind(id, this.scope)
    const actual = await attempt(
      real,
      rewindConversation({ sessionId: real.sessionId, messageId: id as MessageId, scope: this.scope }),
    )
    expectSame(`rewind to ${id} (${this.scope})`, outcomeKind(actual), outcomeKind(predicted))
    if (actual.ok && predicted.ok) {
      expectSame("rewind target", actual.value.targetMessageId, predicted.value.target)
      expectSame("stopped tasks", [...actual.value.stoppedTaskIds].sort(), [...predicted.value.stops].sort())
      expectSame("generation", actual.value.cursor.branchGeneration, model.generation + 1)
      model.rewind(predicted.value.target, predicted.value.stops)
    }
  }
  toString = () =>
    `Rewind(${this.unknownTarget ? "unknown" : `${this.fromActive ? "active" : "any"}:${this.pick.toFixed(2)}`}, ${this.scope})`
}

class ReadBranch extends ModelCommand {
  check = () => true
  async apply() {}
  toString = () => "ReadBranch"
}

const unit = fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true })

export const sessionCommands = (maxCommands = 60) =>
  fc.commands(
    [
      fc.constant(new AppendUser()),
      fc
        .tuple(
          fc.constantFrom("assistant" as const, "system" as const),
          fc.constantFrom("ok" as const, "error" as const),
        )
        .map(([r, s]) => new AppendReply(r, s)),
      fc.constantFrom("ok" as const, "error" as const).map((s) => new AppendReply("assistant", s)),
      fc.tuple(unit, unit).map(([a, b]) => new Compact(a, b)),
      fc.tuple(unit, fc.boolean()).map(([p, r]) => new StartTask(p, r)),
      fc
        .tuple(unit, fc.constantFrom("completed" as const, "failed" as const))
        .map(([p, o]) => new FinishTask(p, o)),
      fc
        .tuple(
          unit,
          fc.constantFrom("conversation" as const, "both" as const),
          fc.integer({ min: 0, max: 9 }),
        )
        .map(([p, s, n]) => new Rewind(p, s, n === 0, n >= 5)),
      fc
        .tuple(unit, fc.constantFrom("conversation" as const, "both" as const))
        .map(([p, s]) => new Rewind(p, s, false, true)),
      fc.constant(new AppendUser()),
      fc.constant(new ReadBranch()),
    ],
    { maxCommands, size: "max" },
  )

export interface SessionModelTestOptions {
  /** Number of random command sequences (default 200). */
  readonly numRuns?: number
  /** Seed; defaults to REWIND_MODEL_SEED or a fixed value, and is printed so a failure can be replayed. */
  readonly seed?: number
  readonly maxCommands?: number
}

export const DEFAULT_MODEL_SEED = 20261130

export const modelSeed = (explicit?: number): number => {
  if (explicit !== undefined) return explicit
  const fromEnv = Number(globalThis.process?.env?.REWIND_MODEL_SEED)
  return Number.isInteger(fromEnv) ? fromEnv : DEFAULT_MODEL_SEED
}

/**
 * Runs the conversation model against a store. `makeStore` is called once per command sequence and
 * must give a fresh, empty store (its scope is closed when the sequence ends).
 */
export const checkSessionModel = async (
  makeStore: () => Layer.Layer<SessionStore, unknown>,
  options: SessionModelTestOptions = {},
): Promise<{ readonly seed: number; readonly numRuns: number }> => {
  const seed = modelSeed(options.seed)
  const numRuns = options.numRuns ?? 200
  await fc.assert(
    fc.asyncProperty(sessionCommands(options.maxCommands), async (cmds) => {
      const runtime = ManagedRuntime.make(
        Layer.mergeAll(
          makeStore(),
          layerScriptedTasks,
          IdGenerators.layerSequential("m"),
          layerSteppingClock(),
        ),
      )
      try {
        const session = await runtime.runPromise(createSession({ title: "model", cwd: "/model" }))
        const real: Real = { runtime, sessionId: session.id, seen: [] }
        const model = new SessionModel()
        await checkInvariants(model, real)
        await fc.asyncModelRun(() => ({ model, real }), cmds)
      } finally {
        await runtime.dispose()
      }
    }),
    { numRuns, seed },
  )
  return { seed, numRuns }
}
