/**
 * Invariant 5 of DESIGN §9 as a property: rewind then redo restores files and conversation byte
 * for byte. Over random sessions (random files, turns of agent edits, creations and deletions,
 * replies) one or two rewinds are made, each by a random path (cascade of files or of files and
 * conversation, one checkpoint, `rewindToMessageCheckpoint`, preview/apply by turn or by message, an edit in
 * rewind mode, or a point restore to the point a turn captured, after which the conversation goes
 * on), then as many redos, newest first. After each redo the workspace (every file's bytes), the
 * active branch and the set of spent checkpoints must be exactly what they were before the rewind
 * it reverses; a point restore's redo gives back the files and leaves the conversation as it is,
 * the messages added since included; a redo with nothing left to reverse is refused. Run against any Workspace +
 * ArtifactStore + SessionStore + OperationJournal (each adapter's tests call it).
 */
import { describe, expect, it } from "@effect/vitest"
import { type PointId, Refused, type SessionId, type WorkspacePath } from "@rewind/contracts"
import {
  type ArtifactStore,
  activeBranch,
  appendReply,
  appendUserMessage,
  applyFileRewind,
  applyPointRestore,
  type BackgroundTasks,
  capturePoint,
  completeTurn,
  createSession,
  editUserQuery,
  type IdGenerator,
  IdGenerators,
  loadSession,
  type OperationJournal,
  previewFileRewind,
  previewPointRestore,
  recordFileMutation,
  redo,
  rewindCascade,
  rewindToCheckpoint,
  rewindToMessageCheckpoint,
  type SessionStore,
  Workspace,
  type WorkspaceService,
} from "@rewind/core"
import { Effect, Either, FastCheck as fc, Layer, Option, type Scope } from "effect"
import { layerNoBackgroundTasks } from "../noBackgroundTasks.js"
import { layerSteppingClock } from "../steppingClock.js"
import { countScenarioOutcomes } from "./scenarioOutcomes.js"

export interface RedoEnvironment {
  /** A fresh, empty workspace for this run. */
  readonly workspace: WorkspaceService
  /** Fresh, empty stores for this run, the operation journal included. */
  readonly stores: Layer.Layer<ArtifactStore | SessionStore | OperationJournal, unknown>
}

export interface RedoHarness {
  readonly make: Effect.Effect<RedoEnvironment, unknown, Scope.Scope>
}

const PATHS = ["a.txt", "src/b.ts", "src/deep/c.md", "d.bin"] as const

type Content = Uint8Array | null

interface Mutation {
  readonly path: number
  readonly content: Content
  readonly tool: "Write" | "Edit"
}

type Rewind =
  | { readonly kind: "cascade"; readonly turn: number; readonly scope: "workspace" | "both" }
  | { readonly kind: "checkpoint"; readonly index: number }
  | { readonly kind: "code"; readonly turn: number }
  | { readonly kind: "apply"; readonly by: "turn" | "message"; readonly turn: number }
  | { readonly kind: "edit" }
  | { readonly kind: "point"; readonly turn: number }

interface Scenario {
  readonly initial: ReadonlyArray<Content>
  readonly turns: ReadonlyArray<ReadonlyArray<Mutation>>
  readonly rewinds: ReadonlyArray<Rewind>
}

// Arbitrary bytes, not only text: redo must give back exactly what was there.
const contentArb: fc.Arbitrary<Content> = fc.option(fc.uint8Array({ maxLength: 24 }), { nil: null, freq: 4 })

const rewindArb: fc.Arbitrary<Rewind> = fc.oneof(
  fc.record({
    kind: fc.constant("cascade" as const),
    turn: fc.nat(3),
    scope: fc.constantFrom("workspace" as const, "both" as const),
  }),
  fc.record({ kind: fc.constant("checkpoint" as const), index: fc.nat(12) }),
  fc.record({ kind: fc.constant("code" as const), turn: fc.nat(3) }),
  fc.record({
    kind: fc.constant("apply" as const),
    by: fc.constantFrom("turn" as const, "message" as const),
    turn: fc.nat(3),
  }),
  fc.record({ kind: fc.constant("edit" as const) }),
  fc.record({ kind: fc.constant("point" as const), turn: fc.nat(3) }),
)

const scenarioArb: fc.Arbitrary<Scenario> = fc.record({
  initial: fc.array(contentArb, { minLength: PATHS.length, maxLength: PATHS.length }),
  turns: fc.array(
    fc.array(
      fc.record({
        path: fc.nat(PATHS.length - 1),
        content: contentArb,
        tool: fc.constantFrom("Write" as const, "Edit" as const),
      }),
      { minLength: 1, maxLength: 4 },
    ),
    { minLength: 1, maxLength: 4 },
  ),
  rewinds: fc.array(rewindArb, { minLength: 1, maxLength: 2 }),
})

type Env = ArtifactStore | SessionStore | OperationJournal | Workspace | IdGenerator | BackgroundTasks

const hex = (bytes: Uint8Array) => Buffer.from(bytes).toString("hex")

/** Every file under the root as path -> bytes (hex); directories are structure, not state. */
const snapshotFiles = (workspace: WorkspaceService) =>
  Effect.gen(function* () {
    const out: Record<string, string> = {}
    const walk = (dir: WorkspacePath | undefined): Effect.Effect<void, unknown> =>
      Effect.gen(function* () {
        for (const entry of yield* workspace.list(dir)) {
          const path = (dir === undefined ? entry.name : `${dir}/${entry.name}`) as WorkspacePath
          if (entry.kind === "directory") yield* walk(path)
          else {
            const file = yield* workspace.read(path)
            out[path] = Option.match(file, { onNone: () => "<gone>", onSome: (f) => hex(f.content) })
          }
        }
      })
    yield* walk(undefined)
    return out
  })

const sameBytes = (a: Content, b: Content) =>
  a === null || b === null ? a === b : a.length === b.length && a.every((x, i) => x === b[i])

type Outcome = "rewound" | "restored" | "refused" | "redone" | "redo_refused_when_empty"

const runScenario = (harness: RedoHarness, scenario: Scenario) =>
  Effect.gen(function* () {
    const env = yield* harness.make
    const context = yield* Layer.build(
      Layer.mergeAll(
        env.stores,
        Layer.succeed(Workspace, env.workspace),
        IdGenerators.layerSequential("redo"),
        layerNoBackgroundTasks,
        layerSteppingClock(),
      ),
    )
    const run = <A, E>(effect: Effect.Effect<A, E, Env>) => Effect.provide(effect, context)
    const ws = env.workspace
    const put = (path: string, content: Content) =>
      content === null
        ? Effect.asVoid(ws.delete(path as WorkspacePath))
        : ws.write(path as WorkspacePath, content)

    const current = new Map<string, Content>()
    for (const [i, path] of PATHS.entries()) {
      const content = scenario.initial[i] ?? null
      current.set(path, content)
      if (content !== null) yield* put(path, content)
    }
    const session = yield* run(createSession({ title: "redo property", cwd: ws.root }))
    const sessionId: SessionId = session.id
    const turns: Array<{ messageId: string; turnId: string }> = []
    const checkpointIds: Array<string> = []
    const points: Array<PointId> = []
    for (const [t, mutations] of scenario.turns.entries()) {
      const user = yield* run(appendUserMessage(sessionId, { text: `turn ${t}` }))
      turns.push(user)
      // The turn's point: the workspace as it was before the turn (what a "point" restore goes back to).
      const captured = yield* run(capturePoint(sessionId, user.turnId))
      if (captured._tag !== "Captured") return yield* Effect.dieMessage(`not captured: ${captured.reason}`)
      points.push(captured.point.pointId)
      for (const m of mutations) {
        const path = PATHS[m.path]!
        const before = current.get(path) ?? null
        if (sameBytes(before, m.content)) continue
        yield* put(path, m.content)
        current.set(path, m.content)
        const recorded = yield* run(
          recordFileMutation({
            sessionId,
            turnId: user.turnId,
            path,
            toolName: m.tool,
            before,
            after: m.content,
          }),
        )
        if (!recorded.recorded) return yield* Effect.dieMessage(`not recorded: ${recorded.warning.message}`)
        checkpointIds.push(recorded.checkpoint.checkpointId)
      }
      yield* run(
        appendReply(sessionId, { turnId: user.turnId, parts: [{ kind: "text", text: `done ${t}` }] }),
      )
      yield* run(completeTurn(sessionId, user.turnId))
    }

    const observe = Effect.gen(function* () {
      const state = yield* run(loadSession(sessionId))
      return {
        files: yield* snapshotFiles(ws),
        branch: [...activeBranch(state)],
        spent: [...state.spentCheckpointIds].sort(),
      }
    })
    const turnOf = (n: number) => turns[Math.min(n, turns.length - 1)]!
    const rewindBy = (r: Rewind): Effect.Effect<unknown, unknown, Env> => {
      switch (r.kind) {
        case "cascade":
          return rewindCascade({ sessionId, messageId: turnOf(r.turn).messageId as never, scope: r.scope })
        case "checkpoint":
          return checkpointIds.length === 0
            ? Effect.fail(new Refused({ kind: "nothing_to_undo", message: "no checkpoint" }))
            : rewindToCheckpoint({
                sessionId,
                checkpointId: checkpointIds[r.index % checkpointIds.length] as never,
              })
        case "code":
          return rewindToMessageCheckpoint({ sessionId, messageId: turnOf(r.turn).messageId as never })
        case "apply":
          return Effect.flatMap(
            previewFileRewind(
              r.by === "turn"
                ? { sessionId, turnId: turnOf(r.turn).turnId as never }
                : { sessionId, messageId: turnOf(r.turn).messageId as never },
            ),
            (preview) => applyFileRewind(preview),
          )
        case "point": {
          const pointId = points[Math.min(r.turn, points.length - 1)]!
          return Effect.flatMap(previewPointRestore(sessionId, pointId), (preview) =>
            preview.token === undefined
              ? Effect.fail(new Refused({ kind: "conflict", message: "the restore cannot apply" }))
              : applyPointRestore(sessionId, pointId, preview.token),
          )
        }
        case "edit":
          // Only an edit's rewind half: the new turn it starts is not part of what redo restores.
          return Effect.gen(function* () {
            const state = yield* loadSession(sessionId)
            const last = turns.at(-1)!
            if (!activeBranch(state).includes(last.messageId as never)) {
              return yield* new Refused({ kind: "not_last_turn", message: "the last turn was cut" })
            }
            return yield* editUserQuery({
              sessionId,
              messageId: last.messageId as never,
              text: "again",
              mode: "rewind",
            })
          })
      }
    }

    const outcomes: Array<Outcome> = []
    // What each redo must give back; a point restore's leaves the branch as the redo finds it.
    type Expected = Omit<Effect.Effect.Success<typeof observe>, "branch"> & {
      readonly branch: ReadonlyArray<string> | "unchanged"
    }
    const stack: Array<Expected> = []
    for (const r of scenario.rewinds) {
      const before = yield* observe
      const result = yield* Effect.either(run(rewindBy(r)))
      if (Either.isLeft(result)) {
        if (!(result.left instanceof Refused)) return yield* Effect.fail(result.left)
        outcomes.push("refused")
        // A refused rewind changes nothing.
        expect(yield* observe).toEqual(before)
        continue
      }
      if (r.kind === "point") {
        // A restore that changed nothing leaves nothing to undo.
        if ((result.right as { event: { files: ReadonlyArray<unknown> } }).event.files.length === 0) continue
        outcomes.push("restored")
        // The conversation goes on after a point restore; its redo must leave the conversation as
        // it is then (it restores files only), those messages and any added later included.
        const later = yield* run(appendUserMessage(sessionId, { text: "after the restore" }))
        yield* run(appendReply(sessionId, { turnId: later.turnId, parts: [{ kind: "text", text: "ok" }] }))
        yield* run(completeTurn(sessionId, later.turnId))
        stack.push({ ...before, branch: "unchanged" })
        continue
      }
      outcomes.push("rewound")
      // After an edit the new question follows the rewind; redo still brings back the branch as
      // it was before the rewind, which leaves that question on a cut branch.
      stack.push(before)
    }
    while (stack.length > 0) {
      const expected = stack.pop()!
      const branchBefore = (yield* observe).branch
      yield* run(redo(sessionId))
      outcomes.push("redone")
      const after = yield* observe
      expect(after.files).toEqual(expected.files)
      expect(after.spent).toEqual(expected.spent)
      expect(after.branch).toEqual(expected.branch === "unchanged" ? branchBefore : expected.branch)
    }
    const empty = yield* Effect.either(run(redo(sessionId)))
    if (Either.isLeft(empty) && empty.left instanceof Refused && empty.left.kind === "nothing_to_undo") {
      outcomes.push("redo_refused_when_empty")
    } else
      return yield* Effect.dieMessage(
        `a redo with nothing to reverse was not refused: ${JSON.stringify(empty)}`,
      )
    return outcomes
  }).pipe(Effect.scoped)

export const redoProperties = (
  name: string,
  harness: RedoHarness,
  options: { readonly runs?: number } = {},
) => {
  describe(`redo properties: ${name}`, () => {
    it.effect(
      "invariant 5: rewind (or point restore) then redo restores files and conversation byte for byte",
      () =>
        Effect.gen(function* () {
          const { parameters, seen } = yield* countScenarioOutcomes(
            `rewind then redo (${name})`,
            options.runs ?? 50,
            scenarioArb,
            (scenario) => runScenario(harness, scenario),
          )

          // A property whose rewinds were all refused would prove nothing.
          expect(seen.get("redone") ?? 0).toBeGreaterThan(parameters.numRuns / 2)
          // Nor one that never undid a point restore.
          if (parameters.numRuns >= 20) expect(seen.get("restored") ?? 0).toBeGreaterThan(0)
        }),
    )
  })
}
