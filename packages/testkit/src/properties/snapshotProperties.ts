/**
 * Property tests of the snapshot engine, run by every workspace adapter over a harness:
 * - capture → random mutations (edits, creations, deletions, mode changes, symlinks) → restore
 *   gives back exactly what the point recorded (tombstoned paths absent, files and modes and
 *   links equal), leaves paths the point does not mention alone; the engine's `redo` brings back
 *   the state the restore replaced, exactly, and so does restoring its rescue point.
 * - with links that lead out of the root among the mutations: no restore makes, removes or
 *   retargets one (the protection policy keeps the path, and the preview lists it), none refuses
 *   for it, everything else is restored as above, and the redo still undoes the restore exactly.
 * - GC (see `snapshotGcProperty`) never removes content reachable from a live root (invariant 8).
 */
import { describe, expect, it } from "@effect/vitest"
import { type PointId, Refused, type SessionId, type TurnId } from "@rewind/contracts"
import {
  ArtifactStore,
  applyPointRestore,
  capturePoint,
  cleanup,
  createSession,
  declareWriteIntent,
  type IdGenerator,
  loadManifest,
  manifestBlobs,
  type OperationJournal,
  previewPointRestore,
  readPointIndex,
  redo,
  type SessionStore,
  type Workspace,
} from "@rewind/core"
import { Duration, Effect, FastCheck as fc, type Layer } from "effect"
import { withOpenHarness } from "./harnessScope.js"
import { countScenarioOutcomes, runScenarios } from "./scenarioOutcomes.js"

/** Direct access to the files under test, bypassing Rewind (what the agent's shell would do). */
export interface SnapshotHarness {
  /**
   * A fresh, empty workspace with fresh stores; disposed by `dispose`. Point restores journal their
   * writes like every restore, so the stores include an OperationJournal (an in-process one, such
   * as `@rewind/adapter-memory`'s, suffices).
   */
  readonly open: () => {
    readonly layer: Layer.Layer<Workspace | ArtifactStore | SessionStore | IdGenerator | OperationJournal>
    readonly write: (path: string, content: string, mode: number) => void
    readonly symlink: (path: string, target: string) => void
    /** Removes a file or symlink if present. */
    readonly remove: (path: string) => void
    /** Removes whatever is at the path, a directory with everything under it included. */
    readonly removeTree: (path: string) => void
    /** path → "file <mode octal> <content>" | "link <target>" for every non-directory entry. */
    readonly tree: () => Map<string, string>
    readonly dispose: () => void
  }
}

const DIRS = ["", "src", "src/lib", "docs"] as const
const NAMES = ["a.txt", "b.ts", "c.md", "d"] as const
const LINKS = ["ln1", "ln2"] as const
const MODES = [0o644, 0o755, 0o600] as const

const filePath = fc
  .tuple(fc.constantFrom(...DIRS), fc.constantFrom(...NAMES))
  .map(([d, n]) => (d === "" ? n : `${d}/${n}`))
const linkPath = fc
  .tuple(fc.constantFrom(...DIRS), fc.constantFrom(...LINKS))
  .map(([d, n]) => (d === "" ? n : `${d}/${n}`))
const content = fc.string({ maxLength: 40 })

type Mutation =
  | { readonly op: "write"; readonly path: string; readonly content: string; readonly mode: number }
  | { readonly op: "chmod"; readonly path: string; readonly mode: number }
  | { readonly op: "delete"; readonly path: string }
  | { readonly op: "link"; readonly path: string; readonly target: string }

const mutation: fc.Arbitrary<Mutation> = fc.oneof(
  fc.record({ op: fc.constant("write" as const), path: filePath, content, mode: fc.constantFrom(...MODES) }),
  fc.record({ op: fc.constant("chmod" as const), path: filePath, mode: fc.constantFrom(...MODES) }),
  fc.record({ op: fc.constant("delete" as const), path: fc.oneof(filePath, linkPath) }),
  // Links point at a sibling name (present or dangling), never out of the root.
  fc.record({
    op: fc.constant("link" as const),
    path: linkPath,
    target: fc.constantFrom(...NAMES, "missing"),
  }),
)

/** Targets that lead out of the root: absolute, or climbing above it. */
const ESCAPING_TARGETS = ["/tmp", "/etc/passwd", "../../outside", "../../../elsewhere/x"] as const

/** `mutation`, with links that may also lead out of the root. */
const mutationWithEscapes: fc.Arbitrary<Mutation> = fc.oneof(
  mutation,
  fc.record({
    op: fc.constant("link" as const),
    path: linkPath,
    target: fc.constantFrom(...ESCAPING_TARGETS),
  }),
)

/** Whether `entry` (a `tree()` value) at `path` is a link leading out of the root: absolute, or above it. */
const escapes = (path: string, entry: string | undefined) => {
  if (entry === undefined || !entry.startsWith("link ")) return false
  const target = entry.slice(5)
  if (target.startsWith("/")) return true
  let depth = path.split("/").length - 1
  for (const segment of target.split("/")) {
    if (segment === "..") depth--
    else if (segment !== "." && segment !== "") depth++
    if (depth < 0) return true
  }
  return false
}

const escapingScenarioArb = fc.record({
  initial: fc.array(mutationWithEscapes, { minLength: 1, maxLength: 12 }),
  between: fc.array(mutationWithEscapes, { maxLength: 10 }),
  after: fc.array(mutationWithEscapes, { minLength: 1, maxLength: 12 }),
})

const scenarioArb = fc.record({
  initial: fc.array(mutation, { minLength: 1, maxLength: 12 }),
  between: fc.array(mutation, { maxLength: 10 }),
  after: fc.array(mutation, { minLength: 1, maxLength: 12 }),
})

type Files = ReturnType<SnapshotHarness["open"]>

const mutate = (files: Files, mutations: ReadonlyArray<Mutation>) => {
  for (const m of mutations) {
    switch (m.op) {
      case "write":
        files.write(m.path, m.content, m.mode)
        break
      case "chmod": {
        const now = files.tree().get(m.path)
        if (now?.startsWith("file ")) {
          const rest = now.slice(5)
          files.write(m.path, rest.slice(rest.indexOf(" ") + 1), m.mode)
        }
        break
      }
      case "delete":
        files.remove(m.path)
        break
      case "link":
        files.remove(m.path)
        files.symlink(m.path, m.target)
        break
    }
  }
}

/** How many paths restores changed, by action, so the suite can show it exercised each one. */
type Tally = Record<"written" | "deleted" | "linked", number>

const restore = (sessionId: SessionId, pointId: PointId, tally: Tally) =>
  Effect.gen(function* () {
    const preview = yield* previewPointRestore(sessionId, pointId)
    if (!preview.canApply || preview.token === undefined) {
      return yield* Effect.dieMessage(
        `restore of ${pointId} cannot apply: ${JSON.stringify(preview.conflicts)}`,
      )
    }
    const result = yield* applyPointRestore(sessionId, pointId, preview.token)
    for (const f of result.event.files) if (f.action !== "unchanged") tally[f.action]++
    return result
  })

const captured = (sessionId: SessionId, turn: string) =>
  Effect.gen(function* () {
    const outcome = yield* capturePoint(sessionId, turn as TurnId)
    if (outcome._tag !== "Captured") return yield* Effect.dieMessage(outcome.reason)
    return outcome.point
  })

type Scenario = typeof scenarioArb extends fc.Arbitrary<infer S> ? S : never

/**
 * A scenario up to its restore: the initial tree captured, the `between` mutations captured as
 * the point under test, then the `after` mutations. `tracked`: every path the point knows.
 */
const staged = (files: Files, scenario: Scenario, title: string) =>
  Effect.gen(function* () {
    const sessionId = (yield* createSession({ title, cwd: "/" })).id
    mutate(files, scenario.initial)
    const atFirst = files.tree()
    yield* captured(sessionId, "turn-1")
    mutate(files, scenario.between)
    const beforeCapture = files.tree()
    const point = yield* captured(sessionId, "turn-2")
    mutate(files, scenario.after)
    const beforeRestore = files.tree()
    const tracked = new Set([...atFirst.keys(), ...beforeCapture.keys()])
    return { sessionId, point, beforeCapture, beforeRestore, tracked }
  })

const runScenario = (harness: SnapshotHarness, scenario: Scenario, tally: Tally) => {
  return withOpenHarness(harness, (files) =>
    Effect.gen(function* () {
      const { sessionId, point, beforeCapture, beforeRestore, tracked } = yield* staged(
        files,
        scenario,
        "snapshots",
      )
      const result = yield* restore(sessionId, point.pointId, tally)
      const restored = files.tree()

      // Every path the point knows is back as captured; a tracked path absent then is absent now.
      for (const path of new Set([...tracked, ...beforeRestore.keys()])) {
        if (tracked.has(path)) expect(restored.get(path), path).toBe(beforeCapture.get(path))
        // Paths the point never saw are left as they were.
        else expect(restored.get(path), path).toBe(beforeRestore.get(path))
      }
      // The engine's redo undoes the restore exactly (files, modes, links); nothing is left to redo.
      const changed = result.event.files.some((f) => f.action !== "unchanged")
      if (changed) {
        yield* redo(sessionId)
        expect(files.tree()).toEqual(beforeRestore)
      } else expect(files.tree()).toEqual(restored)
      const empty = yield* Effect.flip(redo(sessionId))
      expect(empty instanceof Refused && empty.kind).toBe("nothing_to_undo")
      // The rescue point holds the same: restoring it after a second restore undoes that one too.
      const second = yield* restore(sessionId, point.pointId, tally)
      expect(files.tree()).toEqual(restored)
      yield* restore(sessionId, second.rescuePointId, tally)
      expect(files.tree()).toEqual(beforeRestore)
      // And a restore of the same point again finds nothing to change after redoing it.
      yield* restore(sessionId, point.pointId, tally)
      const again = yield* previewPointRestore(sessionId, point.pointId)
      expect(again.changes).toEqual([])
    }),
  )
}

/**
 * A restore among links that lead out of the root: each path where the point's entry or what
 * stands now is such a link (and they differ) is kept as it stands and listed as protected
 * `escaping_link`; every other path is restored as the point has it; the redo gives back the tree
 * the restore replaced. Answers a `kept` outcome per kept path (`countScenarioOutcomes`).
 */
const runEscapingScenario = (harness: SnapshotHarness, scenario: Scenario) => {
  return withOpenHarness(harness, (files) =>
    Effect.gen(function* () {
      const { sessionId, point, beforeCapture, beforeRestore, tracked } = yield* staged(
        files,
        scenario,
        "escaping links",
      )
      const preview = yield* previewPointRestore(sessionId, point.pointId)
      expect(preview.conflicts).toEqual([])
      const keptPaths = [...tracked]
        .filter((p) => beforeCapture.get(p) !== beforeRestore.get(p))
        .filter((p) => escapes(p, beforeCapture.get(p)) || escapes(p, beforeRestore.get(p)))
        .sort()
      expect(
        preview.protected.map((k) => [k.path, k.kind]).sort(([a], [b]) => (a! < b! ? -1 : a! > b! ? 1 : 0)),
      ).toEqual(keptPaths.map((p) => [p, "escaping_link"]))
      const result = yield* applyPointRestore(sessionId, point.pointId, preview.token!)
      const restored = files.tree()
      for (const path of new Set([...tracked, ...beforeRestore.keys()])) {
        const expected =
          tracked.has(path) && !keptPaths.includes(path) ? beforeCapture.get(path) : beforeRestore.get(path)
        expect(restored.get(path), path).toBe(expected)
      }
      if (result.event.files.some((f) => f.action !== "unchanged")) {
        const undone = yield* redo(sessionId)
        expect(undone.kept).toEqual([])
      }
      expect(files.tree()).toEqual(beforeRestore)
      return keptPaths.map(() => "kept" as const)
    }),
  )
}

export const snapshotProperties = (
  name: string,
  harness: SnapshotHarness,
  options: { readonly runs?: number } = {},
) => {
  describe(`snapshot properties: ${name}`, () => {
    it.effect(
      "capture → random mutations → restore gives back the captured tree; redo (or the rescue point) undoes it",
      () =>
        Effect.gen(function* () {
          const tally: Tally = { written: 0, deleted: 0, linked: 0 }
          const parameters = yield* runScenarios(
            `snapshots capture/restore (${name})`,
            options.runs ?? 40,
            scenarioArb,
            (scenario) => runScenario(harness, scenario, tally),
          )
          console.info(`[property] snapshots (${name}) restored paths: ${JSON.stringify(tally)}`)
          // A property whose restores never wrote, deleted or linked would prove nothing about them.
          if (parameters.numRuns >= 20) {
            expect(tally.written).toBeGreaterThan(0)
            expect(tally.deleted).toBeGreaterThan(0)
            expect(tally.linked).toBeGreaterThan(0)
          }
        }),
    )
    it.effect(
      "links leading out of the root are kept, never made, removed or retargeted, and refuse nothing",
      () =>
        Effect.gen(function* () {
          const { parameters, seen } = yield* countScenarioOutcomes(
            `snapshots escaping links (${name})`,
            options.runs ?? 40,
            escapingScenarioArb,
            (scenario) => runEscapingScenario(harness, scenario),
          )
          // A run that never met such a link where a restore would change it would prove nothing.
          if (parameters.numRuns >= 20) expect(seen.get("kept") ?? 0).toBeGreaterThan(0)
        }),
    )
  })
}

const gcScenarioArb = fc.record({
  rounds: fc.array(
    fc.record({
      session: fc.nat(1),
      mutations: fc.array(mutation, { maxLength: 6 }),
      intent: fc.option(fc.array(filePath, { minLength: 1, maxLength: 2 }), { nil: undefined }),
    }),
    { minLength: 1, maxLength: 8 },
  ),
  keepLastPoints: fc.option(fc.integer({ min: 1, max: 3 }), { nil: undefined }),
  byteBudget: fc.option(fc.nat(400), { nil: undefined }),
})

type GcScenario = typeof gcScenarioArb extends fc.Arbitrary<infer S> ? S : never

/**
 * Invariant 8: after a cleanup with any retention policy, every blob reachable from a point that
 * kept its content, from any manifest, and from any write-intent pre-image is still readable.
 */
const runGcScenario = (harness: SnapshotHarness, scenario: GcScenario, tally: { deleted: number }) => {
  return withOpenHarness(harness, (files) =>
    Effect.gen(function* () {
      const sessions = [
        (yield* createSession({ title: "one", cwd: "/" })).id,
        (yield* createSession({ title: "two", cwd: "/" })).id,
      ]
      let turnNo = 0
      for (const round of scenario.rounds) {
        const sessionId = sessions[round.session]!
        turnNo++
        if (round.intent !== undefined)
          yield* declareWriteIntent(sessionId, `turn-${turnNo}` as TurnId, round.intent)
        mutate(files, round.mutations)
        yield* captured(sessionId, `turn-${turnNo}`)
      }
      // The store's clock must pass the last put: with no grace window, a blob put in the very
      // millisecond the mark begins is still (rightly) kept, and this property wants garbage to go.
      yield* Effect.sleep(Duration.millis(2))
      const report = yield* cleanup({
        graceMs: 0,
        retention: {
          ...(scenario.keepLastPoints === undefined ? {} : { keepLastPoints: scenario.keepLastPoints }),
          ...(scenario.byteBudget === undefined ? {} : { byteBudget: scenario.byteBudget }),
        },
      })
      expect(report.swept).toBe(true)
      tally.deleted += report.deleted.length
      const artifacts = yield* ArtifactStore
      const released = new Set(report.releasedPoints)
      for (const sessionId of sessions) {
        const index = yield* readPointIndex(sessionId)
        const newest = index.points.at(-1)
        if (newest !== undefined) expect(released.has(newest.pointId)).toBe(false)
        const newestTurn = index.points.findLast((p) => p.kind === "turn")
        if (newestTurn?.statCacheHash !== undefined)
          expect(yield* artifacts.has(newestTurn.statCacheHash)).toBe(true)
        for (const point of index.points) {
          const manifest = yield* loadManifest(point.manifestHash)
          if (released.has(point.pointId)) continue
          for (const hash of manifestBlobs(manifest)) expect(yield* artifacts.get(hash)).toBeDefined()
        }
        for (const intent of index.writeIntents) {
          for (const e of intent.entries)
            if (e.preImage.state === "file") expect(yield* artifacts.has(e.preImage.hash)).toBe(true)
        }
      }
      // The newest point of a session can always be restored after a cleanup.
      const last = (yield* readPointIndex(sessions[scenario.rounds.at(-1)!.session]!)).points.at(-1)!
      const preview = yield* previewPointRestore(sessions[scenario.rounds.at(-1)!.session]!, last.pointId)
      expect(preview.conflicts).toEqual([])
    }),
  )
}

export const snapshotGcProperty = (
  name: string,
  harness: SnapshotHarness,
  options: { readonly runs?: number } = {},
) => {
  describe(`snapshot GC property: ${name}`, () => {
    it.effect("invariant 8: cleanup never removes content reachable from a live root", () =>
      Effect.gen(function* () {
        const tally = { deleted: 0 }
        const parameters = yield* runScenarios(
          `snapshots GC (${name})`,
          options.runs ?? 40,
          gcScenarioArb,
          (scenario) => runGcScenario(harness, scenario, tally),
        )
        console.info(`[property] snapshots GC (${name}) deleted blobs: ${tally.deleted}`)
        // Retention and superseded stat caches must have made garbage in some runs.
        if (parameters.numRuns >= 20) expect(tally.deleted).toBeGreaterThan(0)
      }),
    )
  })
}
