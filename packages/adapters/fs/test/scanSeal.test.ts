// A capture's seal (core `snapshot/scanSeal.ts`) against the full scan, on a real temp directory
// listed by the native module: after every random step (edit, create, rename, delete, mkdir, rmdir,
// symlink, chmod, .gitignore edit, a same-size rewrite with its mtime put back) one session
// captures with seals on and another with every shortcut off; their points must be the same
// manifest, counts and skipped list. Each step then captures again with nothing changed: where the
// session's last point was sealed, that capture must not have scanned (the test proves the fast
// path, not only the fallback). Then what must break a seal (the git index, a seal gone, a change
// inside the racy window) and what must not record one (a live engine, declared paths). Manifests
// are stored as pages of a few entries, so the capture of the changes reads them through pages.
import { execFileSync } from "node:child_process"
import { rmSync, statSync, utimesSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { MemoryArtifactStore, MemoryOperationJournal, MemorySessionStore } from "@rewind/adapter-memory"
import type { PointCaptured, SessionId } from "@rewind/contracts"
import {
  ArtifactStore,
  appendUserMessage,
  type CaptureOptions,
  CaptureShortcuts,
  capturePoint,
  cleanup,
  createSession,
  IdGenerators,
  LayerPaging,
  layerPointArtifactCache,
  recordFileMutation,
  Workspace,
} from "@rewind/core"
import { Effect, FastCheck as fc, Layer, Option } from "effect"
import { NodeWorkspace, WorkspaceWatcher } from "../src/index.js"
import {
  apply,
  manifestText,
  opArb,
  removeArb,
  rewriteKeepingTimesArb,
  type Sandbox,
  sandbox,
  writeArb,
} from "./treeOps.js"

const sealing = NodeWorkspace.nativeScanAvailable && process.platform === "linux"

/** How many times a capture listed directories the scanning way. */
interface Scans {
  count: number
}

/**
 * The ports over the sandbox; the workspace counts its `scanDirectories` calls in `scans`. With
 * `cached` false there is no point artifact cache, as in a CLI process: every manifest and stat
 * cache is read from the store (a capture of the changes then decodes only the part it needs).
 */
/** The sandbox's Node workspace as `change` makes it, over memory stores and sequential ids. */
const portsWith = (
  box: Sandbox,
  change: (workspace: Workspace["Type"]) => Workspace["Type"],
  ids: string,
  cached: boolean,
) =>
  Layer.mergeAll(
    Layer.effect(Workspace, Effect.map(Workspace, change)).pipe(
      Layer.provide(Layer.orDie(NodeWorkspace.layer(box.root, { durability: "atomic" }))),
    ),
    MemoryArtifactStore.layer,
    MemorySessionStore.layer,
    MemoryOperationJournal.layer,
    IdGenerators.layerSequential(ids),
    cached ? layerPointArtifactCache() : Layer.empty,
    // Manifests of more than a few entries stored as pages (core layerPages.ts): a capture of the
    // changes reads the pages that can hold its directories' entries.
    Layer.succeed(LayerPaging, { from: 8, average: 4, most: 16 }),
  )

/** The workspace with every listing call counted in `scans`. */
const counting =
  (scans: Scans) =>
  (workspace: Workspace["Type"]): Workspace["Type"] => ({
    ...workspace,
    scanDirectories: (directories) =>
      Effect.suspend(() => {
        scans.count++
        return workspace.scanDirectories(directories)
      }),
    // A full capture's scan lists through this one (its listings sealed as it takes them).
    ...(workspace.scanDirectoriesSealed === undefined
      ? {}
      : {
          scanDirectoriesSealed: (...args: Parameters<NonNullable<typeof workspace.scanDirectoriesSealed>>) =>
            Effect.suspend(() => {
              scans.count++
              return workspace.scanDirectoriesSealed!(...args)
            }),
        }),
  })

const layers = (box: Sandbox, scans: Scans, cached = true) => portsWith(box, counting(scans), "s", cached)

/** Runs `program` over the sandbox's ports, then removes the sandbox. */
const inSandbox = <A, E>(
  box: Sandbox,
  scans: Scans,
  program: Effect.Effect<A, E, Layer.Layer.Success<ReturnType<typeof layers>>>,
) =>
  Effect.provide(program, layers(box, scans)).pipe(
    Effect.ensuring(Effect.sync(() => rmSync(box.base, { recursive: true, force: true }))),
  )

/**
 * A property whose every run gets a sandbox and a scan counter, runs the program `run` makes over
 * their ports (with the decoded cache unless it says otherwise) and removes the sandbox; `proves`
 * then checks that the runs took the path the property is about (runs that never did prove nothing
 * of it).
 */
const sandboxProperty = <T>(
  arbitrary: fc.Arbitrary<T>,
  run: (
    value: T,
    box: Sandbox,
    scans: Scans,
  ) => {
    readonly program: Effect.Effect<void, unknown, Layer.Layer.Success<ReturnType<typeof layers>>>
    readonly cached?: boolean
  },
  parameters: { readonly numRuns: number; readonly seed: number },
  proves: () => void,
) =>
  Effect.promise(() =>
    fc.assert(
      fc.asyncProperty(arbitrary, (value) => {
        const box = sandbox()
        const scans: Scans = { count: 0 }
        const { program, cached = true } = run(value, box, scans)
        return Effect.runPromise(Effect.provide(program, layers(box, scans, cached))).finally(() =>
          rmSync(box.base, { recursive: true, force: true }),
        )
      }),
      parameters,
    ),
  ).pipe(Effect.tap(() => Effect.sync(proves)))

/**
 * Files that make the tree big enough for a few changes to be stored as deltas (a change to more
 * than a quarter of the entries is stored whole): 8 directories of 5 files.
 */
const fill = (root: string) => {
  for (let d = 0; d < 8; d++)
    for (let f = 0; f < 5; f++)
      apply(root, { op: "write", path: `fill/d${d}/f${f}.txt`, content: `${d}.${f}` })
}

/**
 * The workspace over `root` as a new process has it (no repository read yet: core keeps one per
 * workspace service), counting the reads of the git index in `reads`; `eager` takes away its
 * `readNow`, so the index is read when found, as on a filesystem that cannot read at once.
 */
const coldWorkspace = (root: string, reads: { count: number }, eager = false) =>
  Layer.effect(
    Workspace,
    Effect.map(Workspace, (workspace) => {
      const repository = workspace.repository
      if (repository === undefined) return workspace
      return {
        ...workspace,
        repository: Effect.map(
          repository,
          Option.map((files) => {
            const index = files.index
            if (index === undefined) return files
            const readNow = index.readNow
            return {
              ...files,
              index: {
                fingerprint: index.fingerprint,
                read: Effect.suspend(() => {
                  reads.count++
                  return index.read
                }),
                ...(eager || readNow === undefined
                  ? {}
                  : {
                      readNow: () => {
                        reads.count++
                        return readNow()
                      },
                    }),
              },
            }
          }),
        ),
      }
    }),
  ).pipe(Layer.provide(Layer.orDie(NodeWorkspace.layer(root, { durability: "atomic" }))))

/** `git` in `root`, with no user's excludes file and a fixed identity. */
const gitIn =
  (root: string, quiet = false) =>
  (...args: Array<string>) =>
    execFileSync(
      "git",
      ["-c", "core.excludesFile=/dev/null", "-c", "user.name=t", "-c", "user.email=t@t", ...args],
      {
        cwd: root,
        ...(quiet ? { stdio: "ignore" as const } : {}),
      },
    )

/** A whole-second time Node sets back exactly. */
const STAMP = new Date("2021-06-01T00:00:00Z")

/** A racy window short enough for a test to wait out (the default is 2 s). */
const RACY_MS = 40
const settle = Effect.sleep(`${RACY_MS + 110} millis`)

/** A new turn's capture: its point, and how it was found (`CaptureScan`). */
const turnCapture = (
  sessionId: SessionId,
  options: CaptureOptions = { settings: { racyWindowMs: RACY_MS } },
) =>
  Effect.gen(function* () {
    const { turnId } = yield* appendUserMessage(sessionId, { text: "turn" })
    const outcome = yield* capturePoint(sessionId, turnId, options)
    if (outcome._tag !== "Captured") throw new Error(outcome.reason)
    return { point: outcome.point, scan: outcome.scan }
  })

const turnPoint = (sessionId: SessionId, options?: CaptureOptions) =>
  Effect.map(turnCapture(sessionId, options), (c) => c.point)

const fullScan = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.provideService(effect, CaptureShortcuts, {
    matchUnchangedManifest: false,
    scanSeal: false,
    readDuringScan: false,
  })

/** A point's seal as stored: its depth over a full record (0 for one) and its size. */
const sealHeader = (point: PointCaptured) =>
  Effect.gen(function* () {
    const bytes = yield* (yield* ArtifactStore).get(point.scanSeal!)
    const header = JSON.parse(new TextDecoder().decode(bytes.subarray(0, bytes.indexOf(10))))
    return {
      depth: (header.depth as number | undefined) ?? 0,
      base: header.base as string,
      bytes: bytes.length,
    }
  })

/** The two points hold the same tree and say the same of it. */
const expectSamePoint = (a: PointCaptured, b: PointCaptured, context: unknown) =>
  Effect.gen(function* () {
    if (a.manifestHash !== b.manifestHash)
      expect({ context, sealed: yield* manifestText(a.manifestHash) }).toEqual({
        context,
        sealed: yield* manifestText(b.manifestHash),
      })
    // The skipped lists in one order: a capture of the changes reports in another than a scan.
    const skipped = (p: PointCaptured) =>
      [...p.skipped].sort((x, y) =>
        x.path < y.path ? -1 : x.path > y.path ? 1 : x.reason < y.reason ? -1 : 1,
      )
    expect({ context, a: [a.files, a.links, a.tombstones, a.bytes, skipped(a)] }).toEqual({
      context,
      a: [b.files, b.links, b.tombstones, b.bytes, skipped(b)],
    })
  })

/**
 * Two sessions over the tree at `root`, each with its first point: `sealed` captures with seals on,
 * the other with every shortcut off. `compare` captures a turn in each and expects the same point;
 * it answers the sealed session's capture (`a`) and the full scan's point (`b`).
 */
const sideBySide = (root: string) =>
  Effect.gen(function* () {
    const sealed = yield* createSession({ title: "sealed", cwd: root })
    const scanned = yield* createSession({ title: "full", cwd: root })
    yield* settle
    const first = yield* turnPoint(sealed.id)
    yield* fullScan(turnPoint(scanned.id))
    const compare = (context: unknown) =>
      Effect.gen(function* () {
        const a = yield* turnCapture(sealed.id)
        const b = yield* fullScan(turnPoint(scanned.id))
        yield* expectSamePoint(a.point, b, { context, by: a.scan })
        return { a, b }
      })
    return { sealed: sealed.id, scanned: scanned.id, first, compare }
  })

/**
 * After a step's capture `a` (and the full scan's point `b`), with nothing changed since: a sealed
 * point is found again by its seal (the same manifest), listing again at most the directories its
 * seal could not vouch for (new or racy ones), and then without a scan at all. Answers whether the
 * last of those held a seal, so the caller can count the repeats the property proved.
 */
const foundAgainBySeal = (
  sealed: SessionId,
  a: { readonly point: PointCaptured },
  b: PointCaptured,
  scans: Scans,
  context: { readonly ops: unknown } & Record<string, unknown>,
) =>
  Effect.gen(function* () {
    const { ops } = context
    yield* settle
    const again = yield* turnCapture(sealed)
    yield* expectSamePoint(again.point, b, { ...context, again: true })
    if (a.point.scanSeal !== undefined) {
      expect({ ops, by: again.scan?.by }).toEqual({ ops, by: "seal" })
      expect(again.point.manifestHash).toBe(a.point.manifestHash)
    }
    const before = scans.count
    const third = yield* turnCapture(sealed)
    yield* expectSamePoint(third.point, b, { ...context, third: true })
    if (again.point.scanSeal === undefined) return false
    expect({ ops, scans: scans.count - before, scan: third.scan }).toEqual({
      ops,
      scans: 0,
      scan: { by: "seal" },
    })
    return true
  })

describe.skipIf(!sealing)("a capture's seal", () => {
  it.live(
    "captures what a full scan captures after every random step (listing only what changed), and skips the scan when nothing changed",
    () => {
      const found = { repeats: 0, changes: 0, racy: 0 }
      return sandboxProperty(
        fc.tuple(
          fc.array(
            fc.record({
              ops: fc.array(
                fc.oneof({ weight: 6, arbitrary: opArb }, { weight: 1, arbitrary: rewriteKeepingTimesArb }),
                { minLength: 1, maxLength: 3 },
              ),
              // Captured at once: what changed is inside the racy window, its directories volatile.
              racy: fc.boolean(),
            }),
            { minLength: 1, maxLength: 6 },
          ),
          fc.boolean(),
        ),
        ([steps, cached], box, scans) => {
          apply(box.root, { op: "write", path: "a/x.txt", content: "seed" })
          apply(box.root, { op: "write", path: "b/y.js", content: "seed" })
          apply(box.root, { op: "write", path: "b/c/z.md", content: "seed" })
          fill(box.root)
          const program = Effect.gen(function* () {
            const { sealed, compare } = yield* sideBySide(box.root)
            for (const { ops, racy } of steps) {
              for (const op of ops) apply(box.root, op)
              if (!racy) yield* settle
              const { a, b } = yield* compare({ steps, ops })
              if (a.scan?.rescanned !== undefined) found.changes++
              if (racy && a.point.scanSeal !== undefined) found.racy++
              if (yield* foundAgainBySeal(sealed, a, b, scans, { steps, ops })) found.repeats++
            }
          })
          return { program, cached }
        },
        { numRuns: 12, seed: 27 },
        // The seal held with nothing changed, only what changed was listed, and changes inside the
        // racy window were sealed.
        () => {
          expect(found.repeats).toBeGreaterThan(10)
          expect(found.changes).toBeGreaterThan(10)
          expect(found.racy).toBeGreaterThan(3)
        },
      )
    },
  )

  it.live("a long run of edits past the delta chain's depth limit, without the decoded cache", () => {
    const box = sandbox()
    const scans: Scans = { count: 0 }
    for (const path of ["a/x.txt", "b/y.txt", "b/c/z.txt"])
      apply(box.root, { op: "write", path, content: "0" })
    fill(box.root)
    for (let m = 0; m < 300; m++) apply(box.root, { op: "write", path: `many/m${m}.txt`, content: "m" })
    const program = Effect.gen(function* () {
      const { first, compare } = yield* sideBySide(box.root)
      const ways = new Set<string>()
      const bases: Array<string> = []
      const sealDepths: Array<number> = []
      const deltaSizes: Array<number> = []
      // Each capture stores a delta over the last; at 16 deep the chain is squashed into one delta
      // over the first point's full manifest (`storeDeltas`), and the captures after that go on
      // from there: no manifest is stored whole again.
      for (let i = 1; i <= 24; i++) {
        apply(box.root, {
          op: "write",
          path: ["a/x.txt", "b/y.txt", "b/c/z.txt"][i % 3]!,
          content: String(i),
        })
        if (i % 5 === 0) apply(box.root, { op: "remove", path: "b/c/z.txt" })
        if (i % 5 === 1 && i > 1) apply(box.root, { op: "write", path: "b/c/z.txt", content: "back" })
        // A directory of more files than a capture hashes again: its stat cache entries are read.
        if (i % 4 === 0) apply(box.root, { op: "write", path: `many/m${i % 7}.txt`, content: String(i) })
        yield* settle
        const { a } = yield* compare({ i })
        ways.add(JSON.stringify(a.scan))
        expect(a.scan?.by).toBe("seal")
        const seal = yield* sealHeader(a.point)
        sealDepths.push(seal.depth)
        if (seal.depth > 0) deltaSizes.push(seal.bytes)
        const stored = JSON.parse(
          new TextDecoder().decode(yield* (yield* ArtifactStore).get(a.point.manifestHash)),
        )
        expect({ i, format: stored.format }).toEqual({ i, format: "rewind-manifest-delta/1" })
        bases.push(
          stored.base === first.manifestHash ? `${stored.depth} over the first` : String(stored.depth),
        )
      }
      expect([...ways].some((w) => w.includes("rescanned"))).toBe(true)
      expect(bases[16]).toBe("1 over the first")
      // Each seal of a capture that kept its directories is a delta over the last, a few hundred
      // bytes; at the depth limit one is stored whole again, and deltas go on over it.
      expect(sealDepths.slice(0, 17)).toEqual([...Array.from({ length: 16 }, (_, i) => i + 1), 0])
      expect(sealDepths.slice(17)).toEqual([1, 2, 3, 4, 5, 6, 7])
      expect(Math.max(...deltaSizes)).toBeLessThan(1024)
    })
    return Effect.provide(program, layers(box, scans, false)).pipe(
      Effect.ensuring(Effect.sync(() => rmSync(box.base, { recursive: true, force: true }))),
    )
  })

  it.live("a changed directory deep in the tree is decided by the ignore files above it", () => {
    const box = sandbox()
    const scans: Scans = { count: 0 }
    apply(box.root, { op: "write", path: ".gitignore", content: "tmp/\n" })
    apply(box.root, { op: "write", path: "a/.gitignore", content: "*.log\n!keep.log\n" })
    apply(box.root, { op: "write", path: "a/b/c/x.ts", content: "x" })
    apply(box.root, { op: "write", path: "a/b/.rewindignore", content: "*.gen\n" })
    fill(box.root)
    const program = Effect.gen(function* () {
      const { compare } = yield* sideBySide(box.root)
      for (const path of ["a/b/c/y.log", "a/b/c/keep.log", "a/b/c/z.gen", "a/b/c/tmp/t.ts", "a/b/c/w.ts"])
        apply(box.root, { op: "write", path, content: "new" })
      yield* settle
      const { a, b } = yield* compare("deep")
      // The changed directory and its parent (the directory's own stat is in the parent's listing).
      expect(a.scan).toEqual({ by: "seal", rescanned: 2 })
      expect(a.point.files).toBe(b.files)
      expect(yield* manifestText(a.point.manifestHash)).toContain("a/b/c/keep.log")
      expect(yield* manifestText(a.point.manifestHash)).not.toContain("a/b/c/y.log")
    })
    return inSandbox(box, scans, program)
  })

  it.live(
    "a changed directory of more files than are hashed again takes the rest from the base's stat cache, chosen by parent",
    () => {
      const box = sandbox()
      // 300 files in one directory: over the 256 a capture of the changes hashes again instead of
      // reading the base's stat cache, so their rows are read from it (chosen on the bytes).
      for (let f = 0; f < 300; f++) apply(box.root, { op: "write", path: `big/f${f}.txt`, content: `${f}` })
      fill(box.root)
      const reads = { big: 0 }
      const countingReads = (workspace: Workspace["Type"]): Workspace["Type"] => ({
        ...workspace,
        readMany: (paths) =>
          Effect.suspend(() => {
            reads.big += paths.filter((p) => p.startsWith("big/")).length
            return workspace.readMany(paths)
          }),
      })
      const program = Effect.gen(function* () {
        const { sealed, scanned } = yield* sideBySide(box.root)
        apply(box.root, { op: "write", path: "big/f7.txt", content: "seven, changed" })
        apply(box.root, { op: "write", path: "big/new.txt", content: "new" })
        yield* settle
        const before = reads.big
        const a = yield* turnCapture(sealed)
        // Only what changed was read: the other 299 were vouched for by the base's stat cache.
        expect({ by: a.scan?.by, read: reads.big - before }).toEqual({ by: "seal", read: 2 })
        yield* expectSamePoint(a.point, yield* fullScan(turnPoint(scanned)), "big")
        // And the stat cache the capture wrote vouches for all of them next time.
        yield* settle
        const again = reads.big
        expect((yield* turnCapture(sealed)).scan).toEqual({ by: "seal" })
        expect(reads.big - again).toBe(0)
      })
      return Effect.provide(program, portsWith(box, countingReads, "s", false)).pipe(
        Effect.ensuring(Effect.sync(() => rmSync(box.base, { recursive: true, force: true }))),
      )
    },
  )

  it.live("a same-size rewrite with its mtime put back right after a sealed capture is seen", () => {
    const box = sandbox()
    const scans: Scans = { count: 0 }
    apply(box.root, { op: "write", path: "a/x.txt", content: "one" })
    const program = Effect.gen(function* () {
      const session = yield* createSession({ title: "sealed", cwd: box.root })
      const file = join(box.root, "a/x.txt")
      // Stamped with a whole second, which the rewrite gets back exactly: only its ctime tells.
      const stamp = new Date("2020-01-01T00:00:00Z")
      utimesSync(file, stamp, stamp)
      yield* settle
      const first = yield* turnPoint(session.id)
      expect(first.scanSeal).toBeDefined()
      const before = statSync(file, { bigint: true })
      writeFileSync(file, "two")
      utimesSync(file, stamp, stamp)
      const after = statSync(file, { bigint: true })
      expect([after.size, after.mtimeNs, after.ino]).toEqual([before.size, before.mtimeNs, before.ino])
      yield* settle
      const second = yield* turnPoint(session.id)
      expect(second.manifestHash).not.toBe(first.manifestHash)
      expect(scans.count).toBeGreaterThan(1)
    })
    return inSandbox(box, scans, program)
  })

  it.live(
    "a directory changed inside the racy window is listed again by the next capture; declared paths get no seal",
    () => {
      const box = sandbox()
      const scans: Scans = { count: 0 }
      apply(box.root, { op: "write", path: "a/x.txt", content: "one" })
      apply(box.root, { op: "write", path: "b/y.txt", content: "one" })
      const program = Effect.gen(function* () {
        const session = yield* createSession({ title: "sealed", cwd: box.root })
        yield* settle
        expect((yield* turnPoint(session.id)).scanSeal).toBeDefined()
        // Written just now, and captured with the default window (2 s, so every directory of this
        // young tree is volatile): only `a` changed, and only it is listed again.
        apply(box.root, { op: "write", path: "a/x.txt", content: "two" })
        const fresh = yield* turnCapture(session.id, {})
        expect(fresh.scan).toEqual({ by: "seal", rescanned: 1 })
        expect(fresh.point.scanSeal).toBeDefined()
        yield* settle
        // Nothing changed, but the seal does not vouch for the volatile directories: listed again.
        const again = yield* turnCapture(session.id)
        expect(again.scan).toEqual({ by: "seal", rescanned: 3 })
        expect(again.point.manifestHash).toBe(fresh.point.manifestHash)
        const before = scans.count
        expect((yield* turnCapture(session.id)).scan).toEqual({ by: "seal" })
        expect(scans.count).toBe(before)
        const declared = yield* turnPoint(session.id, {
          settings: { racyWindowMs: RACY_MS },
          declaredPaths: ["a/x.txt"],
        })
        expect(declared.scanSeal).toBeUndefined()
        const plain = yield* turnPoint(session.id)
        expect(plain.scanSeal).toBeDefined()
      })
      return inSandbox(box, scans, program)
    },
  )

  it.live(
    "captures what a full scan captures when the host checkpoints what it writes, in its turn or late",
    () => {
      const found = { sealed: 0, named: 0 }
      return sandboxProperty(
        fc.array(
          fc.record({
            ops: fc.array(opArb, { minLength: 1, maxLength: 3 }),
            checkpoints: fc.constantFrom("none", "turn", "late"),
            // The files it wrote removed again before the capture (a scratch file): a checkpoint
            // then names a path that is not there, which a capture records as a tombstone.
            fleeting: fc.boolean(),
          }),
          { minLength: 1, maxLength: 6 },
        ),
        (steps, box) => {
          apply(box.root, { op: "write", path: "a/x.txt", content: "seed" })
          apply(box.root, { op: "write", path: "b/y.js", content: "seed" })
          fill(box.root)
          const program = Effect.gen(function* () {
            const { sealed, scanned } = yield* sideBySide(box.root)
            for (const { ops, checkpoints, fleeting } of steps) {
              const turns = [
                [sealed, (yield* appendUserMessage(sealed, { text: "turn" })).turnId],
                [scanned, (yield* appendUserMessage(scanned, { text: "turn" })).turnId],
              ] as const
              for (const op of ops) apply(box.root, op)
              if (fleeting)
                for (const op of ops) if (op.op === "write") apply(box.root, { op: "remove", path: op.path })
              // What a host checkpoints: each file it wrote (a protected or ignored one is refused,
              // alike in both sessions).
              const record = Effect.forEach(turns, ([sessionId, turnId]) =>
                Effect.forEach(ops, (op) =>
                  op.op === "write"
                    ? Effect.tap(
                        recordFileMutation({
                          sessionId,
                          turnId,
                          path: op.path,
                          toolName: "Write",
                          before: null,
                          after: op.content,
                        }),
                        (r) => Effect.sync(() => (r.recorded ? found.named++ : undefined)),
                      )
                    : Effect.void,
                ),
              )
              if (checkpoints === "turn") yield* record
              yield* settle
              const options = { settings: { racyWindowMs: RACY_MS } }
              const a = yield* capturePoint(sealed, turns[0][1], options)
              const b = yield* fullScan(capturePoint(scanned, turns[1][1], options))
              if (a._tag !== "Captured" || b._tag !== "Captured") throw new Error("not captured")
              yield* expectSamePoint(a.point, b.point, { steps, ops, checkpoints, fleeting })
              if (a.scan?.by === "seal") found.sealed++
              // Recorded after the turn's capture: the next capture finds the session naming them.
              if (checkpoints === "late") yield* record
            }
            // The last word: a turn with nothing new, after the late checkpoints.
            yield* settle
            const last = yield* turnPoint(sealed)
            const full = yield* fullScan(turnPoint(scanned))
            yield* expectSamePoint(last, full, { steps, last: true })
          })
          return { program }
        },
        { numRuns: 10, seed: 29 },
        // Checkpoints were taken, and captures after them found by the seal.
        () => {
          expect(found.named).toBeGreaterThan(10)
          expect(found.sealed).toBeGreaterThan(10)
        },
      )
    },
  )

  it.live(
    "a checkpoint of a path the seal's session did not name lists again only the directory above it",
    () => {
      const box = sandbox()
      const scans: Scans = { count: 0 }
      apply(box.root, { op: "write", path: "a/x.txt", content: "one" })
      fill(box.root)
      const program = Effect.gen(function* () {
        const { sealed, scanned } = yield* sideBySide(box.root)
        /** A turn of each session in which the host checkpoints `edits` (made by `write`), then its capture. */
        const turn = (edits: ReadonlyArray<readonly [string, string | null, string]>, write: () => void) =>
          Effect.gen(function* () {
            const turns = [
              (yield* appendUserMessage(sealed, { text: "turn" })).turnId,
              (yield* appendUserMessage(scanned, { text: "turn" })).turnId,
            ]
            write()
            for (const [sessionId, turnId] of [
              [sealed, turns[0]!],
              [scanned, turns[1]!],
            ] as const)
              for (const [path, before, after] of edits) {
                const recorded = yield* recordFileMutation({
                  sessionId,
                  turnId,
                  path,
                  toolName: "Write",
                  before,
                  after,
                })
                expect(recorded.recorded).toBe(true)
              }
            yield* settle
            const options = { settings: { racyWindowMs: RACY_MS } }
            const a = yield* capturePoint(sealed, turns[0]!, options)
            const b = yield* fullScan(capturePoint(scanned, turns[1]!, options))
            if (a._tag !== "Captured" || b._tag !== "Captured") throw new Error("not captured")
            yield* expectSamePoint(a.point, b.point, { edits })
            return a
          })
        // A new file and an edit, each checkpointed: two directories listed again, not the tree.
        const first = yield* turn(
          [
            ["fill/d3/new.txt", null, "new"],
            ["a/x.txt", "one", "two"],
          ],
          () => {
            apply(box.root, { op: "write", path: "fill/d3/new.txt", content: "new" })
            apply(box.root, { op: "write", path: "a/x.txt", content: "two" })
          },
        )
        expect(first.scan?.by).toBe("seal")
        expect(first.scan?.rescanned).toBeLessThanOrEqual(4)
        expect(first.point.scanSeal).toBeDefined()
        // A checkpoint recorded late, of a change the last capture already took: no listing changed,
        // but the session names a new path, and its directory is listed again for it.
        apply(box.root, { op: "write", path: "fill/d5/late.txt", content: "late" })
        yield* settle
        yield* turnPoint(sealed)
        yield* fullScan(turnPoint(scanned))
        const late = yield* turn([["fill/d5/late.txt", null, "late"]], () => undefined)
        expect(late.scan).toEqual({ by: "seal", rescanned: 1 })
        // Nothing new since: the seal holds without a listing.
        const before = scans.count
        expect((yield* turnCapture(sealed)).scan).toEqual({ by: "seal" })
        expect(scans.count).toBe(before)
      })
      return inSandbox(box, scans, program)
    },
  )

  it.live(
    "a path deleted since stays sealed as a tombstone while its directory's listing shows it gone",
    () => {
      const box = sandbox()
      const scans: Scans = { count: 0 }
      for (const path of ["a/x.txt", "a/c/d/deep.txt", "b/y.js"])
        apply(box.root, { op: "write", path, content: "one" })
      // Enough files for the manifest to be paged, read without the decoded cache: the capture of
      // the changes must read the page holding the tombstone.
      fill(box.root)
      const program = Effect.gen(function* () {
        const { sealed, compare } = yield* sideBySide(box.root)
        apply(box.root, { op: "remove", path: "a/x.txt" })
        apply(box.root, { op: "rmdir", path: "a/c" })
        yield* settle
        const deleted = (yield* compare("deleted")).a.point
        expect(deleted.tombstones).toBe(2)
        expect(deleted.scanSeal).toBeDefined()
        yield* settle
        const before = scans.count
        const again = yield* turnPoint(sealed)
        expect(scans.count).toBe(before)
        expect(again.manifestHash).toBe(deleted.manifestHash)
        // The directory comes back: its parent's listing changed, so the tombstone is looked at again.
        apply(box.root, { op: "write", path: "a/c/d/deep.txt", content: "two" })
        yield* settle
        const back = (yield* compare("back")).a.point
        expect(back.tombstones).toBe(1)
      })
      return Effect.provide(program, layers(box, scans, false)).pipe(
        Effect.ensuring(Effect.sync(() => rmSync(box.base, { recursive: true, force: true }))),
      )
    },
  )

  it.live(
    "a directory replaced by a file and back, a file by a directory: points as a full scan's, sealed",
    () => {
      const box = sandbox()
      const scans: Scans = { count: 0 }
      for (const path of ["a/x.txt", "a/d/deep.txt", "b/y.txt"])
        apply(box.root, { op: "write", path, content: "one" })
      const program = Effect.gen(function* () {
        const { sealed, compare } = yield* sideBySide(box.root)
        // `a/d` becomes a file: `a/d/deep.txt` is a tombstone below a file, which nothing can be.
        apply(box.root, { op: "rmdir", path: "a/d" })
        apply(box.root, { op: "write", path: "a/d", content: "a file now" })
        yield* settle
        const file = (yield* compare("file")).a
        expect(file.point.scanSeal).toBeDefined()
        yield* settle
        const before = scans.count
        expect((yield* turnCapture(sealed)).scan).toEqual({ by: "seal" })
        expect(scans.count).toBe(before)
        // And a directory again.
        apply(box.root, { op: "remove", path: "a/d" })
        apply(box.root, { op: "write", path: "a/d/deep.txt", content: "two" })
        yield* settle
        const dir = (yield* compare("dir")).a
        expect(dir.scan?.by).toBe("seal")
        // A file replaced by a directory: its tombstone is vouched for by the directory listed there.
        apply(box.root, { op: "remove", path: "b/y.txt" })
        apply(box.root, { op: "write", path: "b/y.txt/inside.txt", content: "dir" })
        yield* settle
        const became = (yield* compare("became")).a
        expect(became.point.scanSeal).toBeDefined()
      })
      return inSandbox(box, scans, program)
    },
  )

  it.live(
    "git rewriting its index keeps the seal; a change to what it tracks lists again only where it changed",
    () => {
      const box = sandbox()
      const scans: Scans = { count: 0 }
      const git = gitIn(box.root)
      const index = join(box.root, ".git/index")
      apply(box.root, { op: "write", path: ".gitignore", content: "*.log\nbuild/\n" })
      for (const path of ["keep.js", "x.log", "build/out.js"])
        apply(box.root, { op: "write", path, content: "seed" })
      fill(box.root)
      git("init", "-q")
      git("add", "--", ".gitignore", "keep.js")
      const program = Effect.gen(function* () {
        const { sealed, first, compare } = yield* sideBySide(box.root)
        expect(first.scanSeal).toBeDefined()
        // A commit and the index's times moved: its stats differ, what it tracks does not. The seal
        // holds by the context's content: no scan at all.
        git("commit", "-qm", "one")
        const stamp = new Date(Date.now() + 5_000)
        utimesSync(index, stamp, stamp)
        yield* settle
        const before = scans.count
        const committed = yield* turnCapture(sealed)
        expect({ scans: scans.count - before, scan: committed.scan }).toEqual({
          scans: 0,
          scan: { by: "seal" },
        })
        yield* compare("committed")
        // An edit staged (the index rewritten with the new content's id): only the edited directory
        // is listed again.
        apply(box.root, { op: "write", path: "keep.js", content: "edited" })
        git("add", "--", "keep.js")
        yield* settle
        const staged = (yield* compare("staged")).a
        expect(staged.scan).toEqual({ by: "seal", rescanned: 1 })
        // A new file, then git adding it: the tracked set changed in one directory, and only that
        // directory is decided again.
        apply(box.root, { op: "write", path: "fill/d0/new.txt", content: "new" })
        yield* settle
        yield* compare("created")
        git("add", "--", "fill/d0/new.txt")
        yield* settle
        const added = (yield* compare("added")).a
        expect(added.scan).toEqual({ by: "seal", rescanned: 1 })
        expect(added.point.files).toBe(first.files + 1)
        // An ignored file tracked: the root is decided again, and the file is taken in.
        git("add", "-f", "--", "x.log")
        yield* settle
        const tracked = (yield* compare("tracked")).a
        expect(tracked.scan).toEqual({ by: "seal", rescanned: 1 })
        expect(tracked.point.files).toBe(first.files + 2)
        // And untracked again: left out again.
        git("rm", "-q", "--cached", "--", "x.log")
        yield* settle
        const untracked = (yield* compare("untracked")).a
        expect(untracked.scan).toEqual({ by: "seal", rescanned: 1 })
        expect(untracked.point.files).toBe(first.files + 1)
        // An outer rule changed (the repository's info/exclude): scope itself changed.
        writeFileSync(join(box.root, ".git/info/exclude"), "*.txt\n")
        yield* settle
        const excluded = (yield* compare("info/exclude")).a
        expect(excluded.scan?.fullScan).toMatch(/what decides scope changed/)
        // A file tracked below an ignored directory: the capture of the changes cannot take it
        // (its scan does not descend there), so the whole tree is scanned and it is taken in.
        git("add", "-f", "--", "build/out.js")
        yield* settle
        const below = (yield* compare("below an ignored directory")).a
        expect(below.scan?.fullScan).toBeDefined()
        expect(yield* manifestText(below.point.manifestHash)).toContain("build/out.js")
      })
      return inSandbox(box, scans, program)
    },
  )

  it.live(
    "files git tracks below an ignored directory are sealed by their stats: after every random step the point a full scan takes, and no scan when nothing changed",
    () => {
      const found = { repeats: 0, beyondChanged: 0, changesKept: 0 }
      // Paths below the ignored build/ (two tracked, one not), beside it, and in a listed directory.
      const below = fc.constantFrom("build/t.js", "build/sub/u.js", "build/loose.js", "build/sub")
      const listed = fc.constantFrom("a/x.txt", "b/y.js", "fill/d1/f1.txt", "a/n.txt")
      const stepArb = fc.oneof(
        { weight: 3, arbitrary: writeArb(below, 6) },
        { weight: 1, arbitrary: removeArb(below) },
        {
          weight: 1,
          arbitrary: fc.record({
            op: fc.constant("chmod" as const),
            path: below,
            mode: fc.constantFrom(0o644, 0o755),
          }),
        },
        { weight: 1, arbitrary: fc.record({ op: fc.constant("rewriteKeepingTimes" as const), path: below }) },
        {
          weight: 1,
          arbitrary: fc.record({
            op: fc.constant("symlink" as const),
            path: below,
            target: fc.constantFrom("t.js", "../a"),
          }),
        },
        { weight: 3, arbitrary: writeArb(listed, 6) },
        { weight: 1, arbitrary: removeArb(listed) },
        { weight: 1, arbitrary: opArb },
        // Another content of the same size under the same whole-second mtime: only ctime tells.
        {
          weight: 2,
          arbitrary: fc.record({
            op: fc.constant("sameStat" as const),
            path: below,
            seed: fc.integer({ min: 0, max: 9 }),
          }),
        },
      )
      const sameStat = (root: string, path: string, seed: number) => {
        const at = join(root, path)
        try {
          const size = statSync(at).size
          writeFileSync(at, String(seed).repeat(size))
          utimesSync(at, STAMP, STAMP)
        } catch {
          // Not a file now: nothing to rewrite.
        }
      }
      return sandboxProperty(
        fc.array(fc.array(stepArb, { minLength: 0, maxLength: 3 }), { minLength: 1, maxLength: 6 }),
        (steps, box, scans) => {
          const git = gitIn(box.root, true)
          apply(box.root, { op: "write", path: ".gitignore", content: "build/\n" })
          for (const path of ["a/x.txt", "b/y.js", "build/t.js", "build/sub/u.js", "build/loose.js"])
            apply(box.root, { op: "write", path, content: "seed" })
          fill(box.root)
          git("init", "-q")
          git("add", "-A")
          git("add", "-f", "--", "build/t.js", "build/sub/u.js")
          git("commit", "-qm", "one")
          for (const path of ["build/t.js", "build/sub/u.js"]) utimesSync(join(box.root, path), STAMP, STAMP)
          const program = Effect.gen(function* () {
            const { sealed, first, compare } = yield* sideBySide(box.root)
            expect(first.scanSeal).toBeDefined()
            for (const ops of steps) {
              for (const op of ops)
                op.op === "sameStat" ? sameStat(box.root, op.path, op.seed) : apply(box.root, op)
              yield* settle
              const { a, b } = yield* compare({ steps, ops })
              if (a.scan?.fullScan?.includes("below an ignored directory, changed") === true)
                found.beyondChanged++
              if (a.scan?.rescanned !== undefined && a.point.scanSeal !== undefined) found.changesKept++
              if (yield* foundAgainBySeal(sealed, a, b, scans, { steps, ops })) found.repeats++
            }
          })
          return { program }
        },
        { numRuns: 10, seed: 61 },
        () => {
          expect(found.repeats).toBeGreaterThan(10)
          expect(found.beyondChanged).toBeGreaterThan(3)
          expect(found.changesKept).toBeGreaterThan(3)
        },
      )
    },
  )

  it.live(
    "a capture of changes reads the git index only where a rule excluded a file it decided, with the points a full scan takes",
    () => {
      const box = sandbox()
      const scans: Scans = { count: 0 }
      const git = gitIn(box.root)
      apply(box.root, { op: "write", path: ".gitignore", content: "*.log\n" })
      apply(box.root, { op: "write", path: "keep.js", content: "seed" })
      fill(box.root)
      apply(box.root, { op: "write", path: "fill/d2/forced.log", content: "tracked all the same" })
      git("init", "-q")
      git("add", "-A")
      git("add", "-f", "--", "fill/d2/forced.log")
      git("commit", "-qm", "one")
      const program = Effect.gen(function* () {
        const { sealed, scanned } = yield* sideBySide(box.root)
        const reads = { count: 0 }
        const cold = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
          Effect.provide(effect, coldWorkspace(box.root, reads))
        // An edit where no rule excludes anything: no decision turns on what git tracks.
        apply(box.root, { op: "write", path: "fill/d0/f0.txt", content: "edited" })
        yield* settle
        const edited = yield* cold(turnCapture(sealed))
        expect({ reads: reads.count, scan: edited.scan }).toEqual({
          reads: 0,
          scan: { by: "seal", rescanned: 1 },
        })
        yield* expectSamePoint(edited.point, yield* fullScan(turnPoint(scanned)), "edited")
        // A file the rules exclude, in a changed directory: whether git tracks it decides, so the
        // index is read; the tracked one beside it stays in, the new one stays out.
        apply(box.root, { op: "write", path: "fill/d2/new.log", content: "ignored" })
        apply(box.root, { op: "write", path: "fill/d2/forced.log", content: "tracked, edited" })
        yield* settle
        const logged = yield* cold(turnCapture(sealed))
        expect({ reads: reads.count, by: logged.scan?.by }).toEqual({ reads: 1, by: "seal" })
        const text = yield* manifestText(logged.point.manifestHash)
        expect(text).toContain("fill/d2/forced.log")
        expect(text).not.toContain("fill/d2/new.log")
        yield* expectSamePoint(logged.point, yield* fullScan(turnPoint(scanned)), "logged")
      })
      return inSandbox(box, scans, program)
    },
  )

  it.live("the git index read when first asked for or when found: the same points and seals", () => {
    const box = sandbox()
    const scans: Scans = { count: 0 }
    const git = gitIn(box.root)
    apply(box.root, { op: "write", path: ".gitignore", content: "*.log\nbuild/\n" })
    for (const path of ["keep.js", "x.log", "build/out.js", "build/other.js"])
      apply(box.root, { op: "write", path, content: "seed" })
    fill(box.root)
    git("init", "-q")
    git("add", "-A")
    // A file the rules exclude that git tracks: the tracked set decides it. (One below an excluded
    // directory would leave the point unsealed: the seals would then hold nothing to compare.)
    git("add", "-f", "--", "x.log")
    const program = Effect.gen(function* () {
      const lazy = yield* createSession({ title: "lazy", cwd: box.root })
      const eager = yield* createSession({ title: "eager", cwd: box.root })
      yield* settle
      const points = (reads: { count: number }, byFinding: boolean) =>
        Effect.provide(
          Effect.all([
            turnPoint(byFinding ? eager.id : lazy.id),
            fullScan(turnPoint(byFinding ? eager.id : lazy.id)),
          ]),
          coldWorkspace(box.root, reads, byFinding),
        )
      const readLazily = { count: 0 }
      const readWhenFound = { count: 0 }
      const [a, fullA] = yield* points(readLazily, false)
      const [b, fullB] = yield* points(readWhenFound, true)
      // A first capture decides everything, so both read the index, once.
      expect([readLazily.count, readWhenFound.count]).toEqual([1, 1])
      for (const [x, y] of [
        [a, b],
        [fullA, fullB],
      ] as const) {
        expect({ manifest: x.manifestHash, statCache: x.statCacheHash, seal: x.scanSeal }).toEqual({
          manifest: y.manifestHash,
          statCache: y.statCacheHash,
          seal: y.scanSeal,
        })
      }
      expect(a.scanSeal).toBeDefined()
      // The tracked ignored file is in, the untracked ignored directory out.
      const text = yield* manifestText(a.manifestHash)
      expect([text.includes('"x.log"'), text.includes("build/")]).toEqual([true, false])
    })
    return inSandbox(box, scans, program)
  })

  it.live(
    "captures what a full scan captures after random edits and git commands (add -f, rm --cached, commit)",
    () => {
      const paths = ["x.txt", "y.js", "z.log", "a/x.txt", "a/z.log", "a/c/y.js", "node_modules/w", "b/z.log"]
      const gitArb = fc.oneof(
        fc.record({ git: fc.constant("add" as const), path: fc.constantFrom(...paths) }),
        fc.record({ git: fc.constant("rm" as const), path: fc.constantFrom(...paths) }),
        fc.record({ git: fc.constant("commit" as const) }),
      )
      const stepArb = fc.array(fc.oneof({ weight: 2, arbitrary: opArb }, { weight: 3, arbitrary: gitArb }), {
        minLength: 1,
        maxLength: 3,
      })
      const found = { bySeal: 0, afterGit: 0 }
      return sandboxProperty(
        fc.array(stepArb, { minLength: 2, maxLength: 6 }),
        (steps, box) => {
          const quietGit = gitIn(box.root, true)
          const git = (...args: Array<string>) => {
            try {
              quietGit(...args)
            } catch {
              // A path that is not there, nothing to commit: as a shell would, go on.
            }
          }
          apply(box.root, { op: "write", path: ".gitignore", content: "*.log\nnode_modules/\n" })
          // Ignored files there from the start: a later `git add -f` of one changes only what git
          // tracks, not the listing its directory had when sealed.
          for (const path of [
            "x.txt",
            "a/x.txt",
            "a/c/y.js",
            "z.log",
            "a/z.log",
            "b/z.log",
            "node_modules/w",
          ])
            apply(box.root, { op: "write", path, content: "s" })
          fill(box.root)
          git("init", "-q")
          git("add", "-A")
          const program = Effect.gen(function* () {
            const { compare } = yield* sideBySide(box.root)
            for (const ops of steps) {
              let gitRan = false
              for (const op of ops) {
                if ("op" in op) apply(box.root, op)
                else {
                  gitRan = true
                  if (op.git === "add") git("add", "-f", "--", op.path)
                  else if (op.git === "rm") git("rm", "-q", "--cached", "--", op.path)
                  else git("commit", "-qam", "step")
                }
              }
              yield* settle
              const { a } = yield* compare({ steps, ops })
              if (a.scan?.by === "seal") {
                found.bySeal++
                if (gitRan) found.afterGit++
              }
            }
          })
          return { program }
        },
        { numRuns: 10, seed: 28 },
        // The seal was taken, after git commands too.
        () => {
          expect(found.bySeal).toBeGreaterThan(10)
          expect(found.afterGit).toBeGreaterThan(5)
        },
      )
    },
  )

  it.live("a seal stored as a delta: cleanup keeps the records below it; one gone costs a scan", () => {
    const box = sandbox()
    const scans: Scans = { count: 0 }
    apply(box.root, { op: "write", path: "a/x.txt", content: "0" })
    fill(box.root)
    const program = Effect.gen(function* () {
      const session = yield* createSession({ title: "sealed", cwd: box.root })
      yield* settle
      yield* turnPoint(session.id)
      let last: PointCaptured | undefined
      for (let i = 1; i <= 3; i++) {
        apply(box.root, { op: "write", path: "a/x.txt", content: String(i) })
        yield* settle
        last = yield* turnPoint(session.id)
      }
      const top = yield* sealHeader(last!)
      expect(top.depth).toBe(3)
      // The older points' seals are garbage, but not the records the latest one is read over.
      yield* cleanup({ graceMs: 0 })
      let before = scans.count
      const again = yield* turnPoint(session.id)
      expect({ scans: scans.count - before, manifest: again.manifestHash }).toEqual({
        scans: 0,
        manifest: last!.manifestHash,
      })
      // A record below gone: the seal cannot be read, and the capture scans to the right point.
      const store = yield* ArtifactStore
      const below = (yield* sealHeader(last!)).base
      yield* store.delete(below as PointCaptured["manifestHash"])
      apply(box.root, { op: "write", path: "a/x.txt", content: "four" })
      yield* settle
      before = scans.count
      const scanned = yield* turnCapture(session.id)
      expect(scans.count).toBeGreaterThan(before)
      expect(scanned.scan?.by).not.toBe("seal")
      const full = yield* fullScan(turnPoint((yield* createSession({ title: "full", cwd: box.root })).id))
      yield* expectSamePoint(scanned.point, full, "after a broken chain")
    })
    return inSandbox(box, scans, program)
  })

  it.live("a seal that is gone costs a scan, not a wrong point; cleanup keeps the latest one", () => {
    const box = sandbox()
    const scans: Scans = { count: 0 }
    apply(box.root, { op: "write", path: "a/x.txt", content: "one" })
    const program = Effect.gen(function* () {
      const session = yield* createSession({ title: "sealed", cwd: box.root })
      yield* settle
      const first = yield* turnPoint(session.id)
      yield* cleanup({ graceMs: 0 })
      const store = yield* ArtifactStore
      expect(yield* store.has(first.scanSeal!)).toBe(true)
      let before = scans.count
      const second = yield* turnPoint(session.id)
      expect(scans.count).toBe(before)
      yield* store.delete(first.scanSeal!)
      apply(box.root, { op: "write", path: "a/x.txt", content: "two" })
      yield* settle
      before = scans.count
      const third = yield* turnPoint(session.id)
      expect(scans.count).toBeGreaterThan(before)
      expect(third.manifestHash).not.toBe(second.manifestHash)
    })
    return inSandbox(box, scans, program)
  })

  /**
   * The ports over the sandbox with the workspace changed by `change` (the seal listing broken, or
   * no sealing scan), fresh stores and ids: two runs of one program over one tree are comparable.
   */
  const changedPorts = (box: Sandbox, change: (workspace: Workspace["Type"]) => Workspace["Type"]) =>
    portsWith(box, change, "d", false)
  const dyingSealListings = (workspace: Workspace["Type"]) => ({
    ...workspace,
    sealListings: () => Effect.die(new Error("the seal listing broke")),
  })
  const noSealingScan = (workspace: Workspace["Type"]) => {
    const { scanDirectoriesSealed: _, ...rest } = workspace
    return rest
  }

  it.live("a seal listing that fails (an adapter's defect) costs the seal, never the capture", () => {
    const box = sandbox()
    apply(box.root, { op: "write", path: "a/x.txt", content: "one" })
    const program = Effect.gen(function* () {
      const session = yield* createSession({ title: "sealed", cwd: box.root })
      yield* settle
      const first = yield* turnPoint(session.id)
      expect(first.scanSeal).toBeUndefined()
      const { turnId } = yield* appendUserMessage(session.id, { text: "turn" })
      const again = yield* capturePoint(session.id, turnId, { settings: { racyWindowMs: RACY_MS } })
      expect(again._tag).toBe("Captured")
      if (again._tag === "Captured")
        expect(again.scan?.unsealed).toBe("a directory could not be listed again")
    })
    // Without a sealing scan, a full capture lists its directories again to seal them.
    return Effect.provide(
      program,
      changedPorts(box, (w) => dyingSealListings(noSealingScan(w))),
    ).pipe(Effect.ensuring(Effect.sync(() => rmSync(box.base, { recursive: true, force: true }))))
  })

  it.live(
    "a full capture seals its point from its own scan's listings: no second listing, the same seal",
    () => {
      const box = sandbox()
      apply(box.root, { op: "write", path: "a/x.txt", content: "one" })
      apply(box.root, { op: "write", path: "a/b/y.txt", content: "two" })
      apply(box.root, { op: "write", path: ".gitignore", content: "ignored/\n" })
      apply(box.root, { op: "write", path: "ignored/z.txt", content: "three" })
      apply(box.root, { op: "symlink", path: "a/link", target: "x.txt" })
      gitIn(box.root)("init", "-q")
      const program = Effect.gen(function* () {
        const session = yield* createSession({ title: "sealed", cwd: box.root })
        yield* settle
        const captured = yield* turnCapture(session.id)
        const store = yield* ArtifactStore
        const seal = captured.point.scanSeal
        return { seal, bytes: seal === undefined ? undefined : yield* store.get(seal) }
      })
      const run = (change: (workspace: Workspace["Type"]) => Workspace["Type"]) =>
        Effect.provide(program, changedPorts(box, change))
      return Effect.gen(function* () {
        // The seal listing would die: the capture never calls it.
        const fromScan = yield* run(dyingSealListings)
        expect(fromScan.seal).toBeDefined()
        // Listed a second time, the same tree seals the same: the same record, byte for byte.
        const listedAgain = yield* run(noSealingScan)
        expect(listedAgain.seal).toBe(fromScan.seal)
        expect(Buffer.from(listedAgain.bytes!).equals(Buffer.from(fromScan.bytes!))).toBe(true)
      }).pipe(Effect.ensuring(Effect.sync(() => rmSync(box.base, { recursive: true, force: true }))))
    },
  )

  it.live("a live engine's captures record no seal", () => {
    const box = sandbox()
    const scans: Scans = { count: 0 }
    apply(box.root, { op: "write", path: "a/x.txt", content: "one" })
    const watcher = WorkspaceWatcher.layer({ cookieDirectory: join(box.store, "watch") })
    const program = Effect.gen(function* () {
      const session = yield* createSession({ title: "live", cwd: box.root })
      yield* settle
      expect((yield* turnPoint(session.id)).scanSeal).toBeUndefined()
      expect((yield* turnPoint(session.id)).scanSeal).toBeUndefined()
    })
    return Effect.scoped(Effect.provide(program, Layer.provideMerge(watcher, layers(box, scans)))).pipe(
      Effect.ensuring(Effect.sync(() => rmSync(box.base, { recursive: true, force: true }))),
    )
  })
})
