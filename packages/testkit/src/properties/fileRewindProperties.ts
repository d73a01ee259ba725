/**
 * Property tests of file rewind over random edit sequences with random injected failures, run
 * against any Workspace + ArtifactStore + SessionStore (each adapter's tests call them):
 *
 * - Invariant 3: a file rewind is all-or-nothing. After success every file holds its expected
 *   content; after any injected failure the workspace equals its state before the rewind (only a
 *   persistent fault may make compensation fail, and then the error must say which files are
 *   not restored while every file it calls restored really is).
 * - Invariant 4: preview/apply never overwrites a file whose content differs from what the agent
 *   wrote; it can apply exactly when the reference model says every file is safe.
 * - Invariant 9: no operation reads or writes outside the workspace root, even when a checkpoint
 *   names a path through a symlink that leads out.
 *
 * The reference model is plain data: the checkpoints the scenario recorded (before/after text per
 * file), the workspace as it was before the rewind, and the rules of DESIGN §5 written out directly.
 */

import { describe, expect, it } from "@effect/vitest"
import type { CheckpointId, MessageId, SessionId, TurnId, WorkspacePath } from "@rewind/contracts"
import { UnrecoverableRewindError } from "@rewind/contracts"
import {
  type ArtifactStore,
  appendReply,
  appendUserMessage,
  applyFileRewind,
  type BackgroundTasks,
  completeTurn,
  createSession,
  DEFAULT_SHELL_LIKE_TOOLS,
  defaultFileRewindSettings,
  type IdGenerator,
  IdGenerators,
  loadSession,
  type OperationJournal,
  previewFileRewind,
  recordFileMutation,
  rewindCascade,
  rewindToCheckpoint,
  rewindToMessageCheckpoint,
  type SessionStore,
  turnFileChanges,
  Workspace,
  type WorkspaceService,
} from "@rewind/core"
import { Cause, Effect, Exit, FastCheck as fc, Layer, Option, type Scope } from "effect"
import type { WorkspaceFixture } from "../conformance/workspaceFixture.js"
import { makeFaultyWorkspace, type WorkspaceFault } from "../faultyWorkspace.js"
import { injectCheckpoint } from "../injectCheckpoint.js"
import { layerNoBackgroundTasks } from "../noBackgroundTasks.js"
import { layerSteppingClock } from "../steppingClock.js"
import { countScenarioOutcomes } from "./scenarioOutcomes.js"

export interface FileRewindEnvironment extends WorkspaceFixture {
  /**
   * The stores for this run (fresh and empty), the operation journal included: the restores
   * journal their writes (an in-process journal, such as `@rewind/adapter-memory`'s, suffices).
   */
  readonly stores: Layer.Layer<ArtifactStore | SessionStore | OperationJournal, unknown>
}

export interface FileRewindHarness {
  /** A fresh workspace (with a sentinel directory outside it) and fresh stores, for one run. */
  readonly make: Effect.Effect<FileRewindEnvironment, unknown, Scope.Scope>
}

// ---- scenarios ----

const PATHS = ["a.txt", "src/b.ts", "src/deep/c.md", "d.txt"] as const
/** Planted as a symlink to the directory outside the root; a checkpoint may name a path under it. */
const ESCAPE_LINK = "out"
const ESCAPE_PATH = `${ESCAPE_LINK}/evil.txt`

type Content = string | null

interface Mutation {
  readonly path: number
  /** null deletes the file. */
  readonly lines: ReadonlyArray<string> | null
  readonly tool: "Write" | "Edit" | "Bash"
}

interface ExternalEdit {
  readonly path: number
  readonly lines: ReadonlyArray<string> | null
}

interface ScenarioTurn {
  readonly mutations: ReadonlyArray<Mutation>
  /** Changes made after the turn by someone else (never recorded). */
  readonly external: ReadonlyArray<ExternalEdit>
}

type Operation =
  | { readonly kind: "cascade"; readonly turn: number; readonly scope: "workspace" | "both" }
  | { readonly kind: "checkpoint"; readonly index: number }
  | { readonly kind: "code"; readonly turn: number }
  | { readonly kind: "apply"; readonly by: "turn" | "message"; readonly turn: number }

interface Fault {
  readonly operation: "read" | "write" | "delete"
  readonly nth: number
  readonly timing: "before" | "after"
  readonly persistent: boolean
}

interface Scenario {
  readonly initial: ReadonlyArray<ReadonlyArray<string> | null>
  readonly turns: ReadonlyArray<ScenarioTurn>
  /** The turn that records a checkpoint through the escaping symlink, if any. */
  readonly escapeTurn: number | null
  readonly operation: Operation
  readonly fault: Fault | null
}

const linesArb = fc.array(fc.constantFrom("alpha", "beta", "gamma", "delta"), { maxLength: 4 })
const pathArb = fc.integer({ min: 0, max: PATHS.length - 1 })

const scenarioArb: fc.Arbitrary<Scenario> = fc
  .record({
    initial: fc.array(fc.option(linesArb, { nil: null, freq: 3 }), {
      minLength: PATHS.length,
      maxLength: PATHS.length,
    }),
    turns: fc.array(
      fc.record({
        mutations: fc.array(
          fc.record({
            path: pathArb,
            lines: fc.option(linesArb, { nil: null, freq: 4 }),
            tool: fc.constantFrom(
              "Write" as const,
              "Edit" as const,
              "Write" as const,
              "Edit" as const,
              "Write" as const,
              "Bash" as const,
            ),
          }),
          { maxLength: 4 },
        ),
        // Someone else edits a file after about one turn in four.
        external: fc.oneof(
          { weight: 3, arbitrary: fc.constant<ReadonlyArray<ExternalEdit>>([]) },
          {
            weight: 1,
            arbitrary: fc.tuple(
              fc.record({ path: pathArb, lines: fc.option(linesArb, { nil: null, freq: 4 }) }),
            ),
          },
        ),
      }),
      { minLength: 1, maxLength: 4 },
    ),
    escapeAt: fc.integer({ min: 0, max: 5 }),
    operation: fc.oneof(
      {
        weight: 1,
        arbitrary: fc.record({
          kind: fc.constant("cascade" as const),
          turn: fc.nat(3),
          scope: fc.constantFrom("workspace" as const, "both" as const),
        }),
      },
      { weight: 1, arbitrary: fc.record({ kind: fc.constant("checkpoint" as const), index: fc.nat(12) }) },
      { weight: 1, arbitrary: fc.record({ kind: fc.constant("code" as const), turn: fc.nat(3) }) },
      {
        // Preview/apply has the most outcomes (unsafe, ignored, applied, rolled back): weigh it up.
        weight: 2,
        arbitrary: fc.record({
          kind: fc.constant("apply" as const),
          by: fc.constantFrom("turn" as const, "message" as const),
          turn: fc.nat(3),
        }),
      },
    ),
    fault: fc.option(
      fc.record({
        operation: fc.constantFrom("read" as const, "write" as const, "write" as const, "delete" as const),
        nth: fc.integer({ min: 1, max: 4 }),
        timing: fc.constantFrom("before" as const, "after" as const),
        persistent: fc.integer({ min: 0, max: 4 }).map((n) => n === 0),
      }),
      { nil: null, freq: 4 },
    ),
  })
  .map(({ escapeAt, operation, turns, ...rest }) => {
    const last = turns.length - 1
    const op: Operation =
      operation.kind === "checkpoint" ? operation : { ...operation, turn: Math.min(operation.turn, last) }
    // About one run in three records a checkpoint through the escaping symlink.
    return {
      ...rest,
      turns,
      operation: op,
      escapeTurn: escapeAt <= last && escapeAt % 2 === 0 ? escapeAt : null,
    }
  })

const render = (lines: ReadonlyArray<string> | null, prefix = ""): Content =>
  lines === null ? null : lines.map((l) => `${prefix}${l}\n`).join("")

// ---- the reference model ----

interface Recorded {
  readonly checkpointId: CheckpointId
  readonly turn: number
  readonly path: string
  readonly before: Content
  readonly after: Content
  readonly tool: string
}

const isShellLike = (tool: string) => DEFAULT_SHELL_LIKE_TOOLS.includes(tool.toLowerCase())

/** Files (and symlinks) under the root as path -> content; directories are structure, not state. */
const snapshot = (workspace: WorkspaceService) =>
  Effect.gen(function* () {
    const out = new Map<string, string>()
    const walk = (dir: WorkspacePath | undefined): Effect.Effect<void, unknown> =>
      Effect.gen(function* () {
        for (const entry of yield* workspace.list(dir)) {
          const path = (dir === undefined ? entry.name : `${dir}/${entry.name}`) as WorkspacePath
          if (entry.kind === "directory") yield* walk(path)
          else if (entry.kind === "symlink") out.set(path, `symlink -> ${yield* workspace.readLink(path)}`)
          else if (entry.kind === "file") {
            const file = yield* workspace.read(path)
            out.set(
              path,
              Option.match(file, {
                onNone: () => "<gone>",
                onSome: (f) => new TextDecoder().decode(f.content),
              }),
            )
          }
        }
      })
    yield* walk(undefined)
    return out
  })

const withContent = (state: ReadonlyMap<string, string>, changes: ReadonlyMap<string, Content>) => {
  const next = new Map(state)
  for (const [path, content] of changes) {
    if (content === null) next.delete(path)
    else next.set(path, content)
  }
  return next
}

const sorted = (m: ReadonlyMap<string, string>) => [...m].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))

interface Expectation {
  /** What the workspace holds if the operation succeeds; undefined when it must not succeed. */
  readonly onSuccess: ReadonlyMap<string, string> | undefined
  /** For preview/apply: whether the model considers every file safe. */
  readonly canApply?: boolean
  readonly ignored?: ReadonlyArray<CheckpointId>
  /** Paths preview/apply must never overwrite (externally modified ones in the selection). */
  readonly protectedPaths: ReadonlyArray<string>
}

const restoreExpectation = (
  pre: ReadonlyMap<string, string>,
  newestFirst: ReadonlyArray<Recorded>,
): Expectation => {
  if (newestFirst.length === 0 || newestFirst.some((r) => r.path === ESCAPE_PATH)) {
    return { onSuccess: undefined, protectedPaths: [] }
  }
  // Peeling newest to oldest leaves each file at the before-content of its oldest checkpoint.
  const changes = new Map<string, Content>()
  for (const r of newestFirst) changes.set(r.path, r.before)
  return { onSuccess: withContent(pre, changes), protectedPaths: [] }
}

const previewExpectation = (
  pre: ReadonlyMap<string, string>,
  newestFirst: ReadonlyArray<Recorded>,
): Expectation => {
  const simulated = new Map<string, Content>()
  const unsafe = new Set<string>()
  const ignored: Array<CheckpointId> = []
  let undoable = 0
  for (const r of newestFirst) {
    if (isShellLike(r.tool)) {
      ignored.push(r.checkpointId)
      continue
    }
    undoable++
    if (unsafe.has(r.path)) continue
    if (r.path === ESCAPE_PATH) {
      unsafe.add(r.path)
      continue
    }
    const current = simulated.has(r.path) ? simulated.get(r.path)! : (pre.get(r.path) ?? null)
    if (current !== r.after) {
      unsafe.add(r.path)
      continue
    }
    simulated.set(r.path, r.before)
  }
  const canApply = unsafe.size === 0 && undoable > 0
  const protectedPaths = [...unsafe].filter((p) => p !== ESCAPE_PATH)
  return { onSuccess: canApply ? withContent(pre, simulated) : undefined, canApply, ignored, protectedPaths }
}

// ---- running one scenario ----

type Outcome =
  | "success"
  | "rolled_back"
  | "refused"
  | "unrecoverable"
  | "fault_fired"
  | "escape_present"
  | "unsafe_preview"
  | "preview_applied"

type Env = ArtifactStore | SessionStore | Workspace | IdGenerator | BackgroundTasks | OperationJournal

const runScenario = (harness: FileRewindHarness, scenario: Scenario) =>
  Effect.gen(function* () {
    const env = yield* harness.make
    const faulty = makeFaultyWorkspace(env.workspace)
    const context = yield* Layer.build(
      Layer.mergeAll(
        env.stores,
        Layer.succeed(Workspace, faulty.service),
        IdGenerators.layerSequential("prop"),
        layerNoBackgroundTasks,
        layerSteppingClock(),
      ),
    )
    const run = <A, E>(effect: Effect.Effect<A, E, Env>) => Effect.provide(effect, context)
    const ws = env.workspace
    const encode = (s: string) => new TextEncoder().encode(s)
    const put = (path: string, content: Content) =>
      content === null
        ? Effect.asVoid(ws.delete(path as WorkspacePath))
        : ws.write(path as WorkspacePath, encode(content))

    yield* env.plantSymlink(ESCAPE_LINK, env.outside)
    const current = new Map<string, Content>()
    for (let i = 0; i < PATHS.length; i++) {
      const content = render(scenario.initial[i] ?? null)
      current.set(PATHS[i]!, content)
      if (content !== null) yield* put(PATHS[i]!, content)
    }

    const session = yield* run(createSession({ title: "property", cwd: ws.root }))
    const sessionId: SessionId = session.id
    const users: Array<MessageId> = []
    const recorded: Array<Recorded> = []
    for (let t = 0; t < scenario.turns.length; t++) {
      const turn = scenario.turns[t]!
      const user = yield* run(appendUserMessage(sessionId, { text: `turn ${t}` }))
      users.push(user.messageId)
      const turnId: TurnId = user.turnId
      for (const m of turn.mutations) {
        const path = PATHS[m.path]!
        const before = current.get(path) ?? null
        const after = render(m.lines)
        if (before === after) continue
        yield* put(path, after)
        current.set(path, after)
        const result = yield* run(
          recordFileMutation({ sessionId, turnId, path, toolName: m.tool, before, after }),
        )
        if (!result.recorded) return yield* Effect.dieMessage(`not recorded: ${result.warning.message}`)
        recorded.push({
          checkpointId: result.checkpoint.checkpointId,
          turn: t,
          path,
          before,
          after,
          tool: m.tool,
        })
      }
      if (scenario.escapeTurn === t) {
        // A record of a write through a symlink that leads out of the root (recordFileMutation
        // refuses one now; an older store or a damaged row may still hold it): the record is data,
        // and restoring it must never reach outside.
        const injected = yield* run(
          injectCheckpoint({ sessionId, turnId, path: ESCAPE_PATH, before: "EVIL\n", after: "EVIL2\n" }),
        )
        const result = { checkpoint: injected }
        recorded.push({
          checkpointId: result.checkpoint.checkpointId,
          turn: t,
          path: ESCAPE_PATH,
          before: "EVIL\n",
          after: "EVIL2\n",
          tool: "Write",
        })
      }
      yield* run(appendReply(sessionId, { turnId, parts: [{ kind: "text", text: `done ${t}` }] }))
      yield* run(completeTurn(sessionId, turnId))
      for (const e of turn.external) {
        const path = PATHS[e.path]!
        const content = render(e.lines, "external ")
        yield* put(path, content)
        current.set(path, content)
      }
    }

    const pre = yield* snapshot(ws)
    const outsideBefore = yield* env.outsideFingerprint()
    const stateBefore = yield* run(loadSession(sessionId))
    const op = scenario.operation
    const newestFirst = (filter: (r: Recorded) => boolean) => recorded.filter(filter).reverse()

    let expectation: Expectation
    let operation: Effect.Effect<unknown, unknown, Env>
    let previewCheck: Effect.Effect<void, unknown, Env> = Effect.void
    switch (op.kind) {
      case "cascade":
        expectation = restoreExpectation(
          pre,
          newestFirst((r) => r.turn >= op.turn),
        )
        operation = rewindCascade({ sessionId, messageId: users[op.turn]!, scope: op.scope })
        break
      case "checkpoint": {
        const target = recorded[op.index % Math.max(1, recorded.length)]
        expectation = restoreExpectation(pre, target === undefined ? [] : [target])
        operation =
          target === undefined
            ? rewindCascade({ sessionId, messageId: users[0]!, scope: "workspace" })
            : rewindToCheckpoint({ sessionId, checkpointId: target.checkpointId })
        break
      }
      case "code": {
        const latest = newestFirst((r) => r.turn === op.turn)[0]
        expectation = restoreExpectation(pre, latest === undefined ? [] : [latest])
        operation = rewindToMessageCheckpoint({ sessionId, messageId: users[op.turn]! })
        break
      }
      case "apply": {
        const selected = newestFirst((r) => (op.by === "turn" ? r.turn === op.turn : r.turn >= op.turn))
        expectation = previewExpectation(pre, selected)
        const target =
          op.by === "turn"
            ? { sessionId, turnId: stateBefore.messages.get(users[op.turn]!)!.turnId }
            : { sessionId, messageId: users[op.turn]! }
        if (selected.length === 0) {
          operation = previewFileRewind(target)
          expectation = { onSuccess: undefined, protectedPaths: [] }
          break
        }
        // The preview runs before any fault is armed: it is the apply that must survive one.
        const preview = yield* run(previewFileRewind(target))
        const model = expectation
        previewCheck = Effect.sync(() => {
          expect(preview.canApply).toBe(model.canApply)
          expect([...preview.ignored.map((i) => i.checkpointId)]).toEqual(model.ignored)
        })
        operation = applyFileRewind(preview)
        break
      }
    }
    yield* run(previewCheck)

    const fault = scenario.fault
    if (fault !== null) {
      const rule: WorkspaceFault = {
        operation: fault.operation,
        nth: fault.nth,
        timing: fault.timing,
        persistent: fault.persistent,
      }
      faulty.control.inject(rule)
    }
    const exit = yield* run(Effect.exit(operation))
    const faultsFired = faulty.control.injected()
    faulty.control.clear()
    const escapeSelected = expectation.onSuccess === undefined && recorded.some((r) => r.path === ESCAPE_PATH)
    const tally = (outcome: Outcome): Array<Outcome> => [
      outcome,
      ...(faultsFired > 0 ? (["fault_fired"] as const) : []),
      ...(escapeSelected ? (["escape_present"] as const) : []),
      ...(op.kind === "apply" && expectation.canApply === false ? (["unsafe_preview"] as const) : []),
      ...(op.kind === "apply" && Exit.isSuccess(exit) ? (["preview_applied"] as const) : []),
    ]

    const post = yield* snapshot(ws)
    const stateAfter = yield* run(loadSession(sessionId))
    const label = JSON.stringify({
      op,
      fault,
      exit: Exit.isSuccess(exit) ? "success" : Cause.pretty(exit.cause),
    })

    // Invariant 9: whatever happened, nothing outside the root was touched.
    expect(yield* env.outsideFingerprint(), label).toBe(outsideBefore)
    expect(env.outsideAccesses?.() ?? [], label).toEqual([])

    // Invariant 4: a file someone else changed is never overwritten by preview/apply.
    for (const path of expectation.protectedPaths) expect(post.get(path), label).toBe(pre.get(path))

    if (Exit.isSuccess(exit)) {
      // Invariant 3, success half: every file holds what the model expects.
      expect(expectation.onSuccess, `${label}: succeeded where the model expects a refusal`).toBeDefined()
      expect(sorted(post), label).toEqual(sorted(expectation.onSuccess!))
      if (op.kind === "cascade" && op.scope === "both") {
        expect(stateAfter.cursor?.targetMessageId, label).toBe(users[op.turn])
      }
      // The undone checkpoints are gone from "this turn's changes" (shell-only rows remain).
      for (let t = 0; t < scenario.turns.length; t++) {
        const table = turnFileChanges(
          stateAfter,
          stateAfter.messages.get(users[t]!)!.turnId,
          defaultFileRewindSettings,
        )
        const undone = new Set(stateAfter.spentCheckpointIds)
        for (const row of table.files)
          for (const id of row.checkpointIds) expect(undone.has(id), label).toBe(false)
      }
      return tally("success")
    }

    const failure = Cause.failureOption(exit.cause)
    if (Option.isSome(failure) && failure.value instanceof UnrecoverableRewindError) {
      // Only a fault that keeps failing can defeat compensation; the error must then be honest.
      expect(fault?.persistent, label).toBe(true)
      const error = failure.value
      expect(
        error.files.some((f) => f.state === "unknown"),
        label,
      ).toBe(true)
      for (const f of error.files) {
        if (f.state === "restored" || f.state === "untouched")
          expect(post.get(f.path), label).toBe(pre.get(f.path))
      }
      return tally("unrecoverable")
    }
    // Invariant 3, failure half: the workspace is exactly as it was, and so is the conversation.
    expect(Cause.isDie(exit.cause), label).toBe(false)
    expect(sorted(post), label).toEqual(sorted(pre))
    expect(stateAfter.cursor, label).toEqual(stateBefore.cursor)
    expect(stateAfter.spentCheckpointIds, label).toEqual(stateBefore.spentCheckpointIds)
    return tally(faultsFired > 0 ? "rolled_back" : "refused")
  }).pipe(Effect.scoped)

/** Registers the file-rewind property tests for one adapter combination. */
export const fileRewindProperties = (
  name: string,
  harness: FileRewindHarness,
  options: { readonly runs?: number } = {},
) => {
  describe(`file rewind properties: ${name}`, () => {
    it.effect("invariants 3, 4 and 9 hold over random edits, rewinds and injected failures", () =>
      Effect.gen(function* () {
        const { parameters, seen } = yield* countScenarioOutcomes(
          `file rewind (${name})`,
          options.runs ?? 60,
          scenarioArb,
          (scenario) => runScenario(harness, scenario),
        )
        // A property that never reached these cases would prove nothing about them.
        if (parameters.numRuns >= 40) {
          for (const needed of [
            "success",
            "rolled_back",
            "fault_fired",
            "escape_present",
            "unsafe_preview",
            "preview_applied",
          ] as const) {
            expect(seen.get(needed) ?? 0, `no run reached '${needed}'`).toBeGreaterThan(0)
          }
        }
      }),
    )
  })
}
