/**
 * The context one case run gets: sizes and budgets for the mode, temp dirs that are removed when
 * the run ends, the shared generated workspaces (put back to their generated state afterwards), the
 * shadow-git factory, and the measuring functions that record figures.
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { performance } from "node:perf_hooks"
import { createShadowGit } from "../baselines/shadowGit.js"
import { type BenchWorkspace, benchWorkspace } from "../workspace/benchWorkspace.js"
import { generateWorkspace, openWorkspace } from "../workspace/generator.js"
import {
  buildShapeWorkspace,
  openShapeWorkspace,
  type ShapeSpec,
  type ShapeWorkspace,
  shapeDirName,
} from "../workspace/shapeWorkspace.js"
import { comparisonFigure, limitFigure } from "./figures.js"
import { measureInterleaved } from "./measure.js"
import type { MemoryTracker } from "./memory.js"
import { BUDGETS, QUICK_SHAPE_SLICE, SIZES } from "./options.js"
import type { BenchCase, BenchContext, Figure, FigureSize, Mode, Sampler } from "./types.js"

export interface CaseRunConfig {
  readonly caseName: string
  readonly size: number | undefined
  readonly mode: Mode
  readonly seed: number
  /** This run's scratch directory (removed by the parent afterwards). */
  readonly scratchDir: string
  /** Where generated workspaces are kept (shared by every case of a benchmark run). */
  readonly workspaceRoot: string
  /** Shape workspaces keep only the shape's paths with one of these prefixes (tests: a tiny tree). */
  readonly shapeInclude?: ReadonlyArray<string>
}

export interface CaseContext {
  readonly ctx: BenchContext
  readonly figures: ReadonlyArray<Figure>
  /** Puts back every workspace the case changed and removes its temp dirs. */
  readonly close: () => void
}

export const makeCaseContext = (
  benchCase: BenchCase,
  config: CaseRunConfig,
  memory: MemoryTracker,
  log: (message: string) => void,
): CaseContext => {
  const owner = { case: benchCase.name, group: benchCase.group }
  const figures: Array<Figure> = []
  const workspaces = new Map<number, { ws: BenchWorkspace; dir: string }>()
  const budget = BUDGETS[config.mode]
  const defaultSize: FigureSize | undefined =
    config.size === undefined ? undefined : { value: config.size, unit: benchCase.sizeUnit ?? "items" }
  mkdirSync(config.scratchDir, { recursive: true })

  const shapes = new Map<string, { ws: BenchWorkspace & ShapeWorkspace; dir: string }>()

  /** Wraps a workspace's mutation helpers so a case that dies mid-change leaves a `dirty` mark. */
  const tracked = (base: BenchWorkspace, dir: string): BenchWorkspace => {
    const markDirty = () => writeFileSync(join(dir, "dirty"), "")
    const ws: BenchWorkspace = {
      ...base,
      edit: (count, seed) => {
        markDirty()
        return base.edit(count, seed)
      },
      create: (count, seed) => {
        markDirty()
        return base.create(count, seed)
      },
      delete: (count, seed) => {
        markDirty()
        return base.delete(count, seed)
      },
      rewrite: (path, bytes) => {
        markDirty()
        base.rewrite(path, bytes)
      },
    }
    return ws
  }

  const workspace = (fileCount: number): BenchWorkspace => {
    const existing = workspaces.get(fileCount)
    if (existing !== undefined) return existing.ws
    const dir = join(config.workspaceRoot, `ws-${config.seed}-${fileCount}`)
    const spec = { fileCount, seed: config.seed }
    // A workspace left dirty by an interrupted case is regenerated rather than trusted.
    let generated = existsSync(join(dir, "dirty")) ? undefined : openWorkspace(dir, spec)
    if (generated === undefined) {
      rmSync(dir, { recursive: true, force: true })
      const started = performance.now()
      generated = generateWorkspace(dir, spec)
      log(
        `generated ${fileCount} files (${(generated.totalBytes / 1e6).toFixed(1)} MB) in ${((performance.now() - started) / 1000).toFixed(1)} s`,
      )
    }
    const ws = tracked(benchWorkspace(generated), dir)
    workspaces.set(fileCount, { ws, dir })
    return ws
  }

  const shapeWorkspace = (shape: string, copies: number): BenchWorkspace & ShapeWorkspace => {
    const spec: ShapeSpec = {
      shape,
      copies,
      ...(config.shapeInclude !== undefined
        ? { include: config.shapeInclude }
        : config.mode === "quick"
          ? { include: QUICK_SHAPE_SLICE }
          : {}),
    }
    const dir = join(config.workspaceRoot, shapeDirName(spec))
    const existing = shapes.get(dir)
    if (existing !== undefined) return existing.ws
    // Built by the first case run that asks, reused by the later ones (the parent removes the
    // workspace root when the benchmark run ends); a dirty or incomplete tree is rebuilt.
    let built = existsSync(join(dir, "dirty")) ? undefined : openShapeWorkspace(dir, spec)
    if (built === undefined) {
      const started = performance.now()
      built = buildShapeWorkspace(dir, spec, ctx.tempDir("shape-ignored"))
      const t = built.ws.tally
      log(
        `materialised ${shapeDirName(spec)}: ${t.files} files (${t.ignored} ignored by git), ${t.directories} directories, ${(t.bytes / 1e6).toFixed(1)} MB in ${((performance.now() - started) / 1000).toFixed(1)} s`,
      )
    }
    const ws = {
      ...tracked(benchWorkspace(built.ws, built.content), dir),
      spec: built.ws.spec,
      tally: built.ws.tally,
    }
    shapes.set(dir, { ws, dir })
    return ws
  }

  const sizeOf = (size: FigureSize | undefined) => size ?? defaultSize

  const ctx: BenchContext = {
    mode: config.mode,
    seed: config.seed,
    sizes: SIZES[config.mode],
    budget,
    size: config.size,
    tempDir: (label) => mkdtempSync(join(config.scratchDir, `${label.replace(/[^A-Za-z0-9._-]/g, "_")}-`)),
    workspace,
    shapeWorkspace,
    shadowGit: (workTree) => createShadowGit(ctx.tempDir("shadow-git"), workTree),
    compare: async (spec) => {
      const samplers: Array<Sampler> = [spec.subject]
      if (spec.baseline !== undefined) samplers.push(spec.baseline)
      if (spec.limit !== undefined) samplers.push(spec.limit)
      const started = performance.now()
      const measured = await measureInterleaved(samplers, { ...budget, ...spec.budget }, memory)
      log(
        `${spec.series}${spec.size === undefined ? "" : ` @ ${spec.size.value} ${spec.size.unit}`}: ${measured[0]!.samples.length} samples in ${((performance.now() - started) / 1000).toFixed(1)} s`,
      )
      const baseline = spec.baseline === undefined ? undefined : measured[1]
      const limit = spec.limit === undefined ? undefined : measured[spec.baseline === undefined ? 1 : 2]
      const figure = comparisonFigure(owner, spec, sizeOf(spec.size), measured[0]!, baseline, limit)
      figures.push(figure)
      if (spec.limitSeries !== undefined && spec.limit !== undefined && limit !== undefined) {
        const limitSpec = { series: spec.limitSeries, sampler: spec.limit }
        figures.push(
          limitFigure(
            owner,
            spec.bytes === undefined ? limitSpec : { ...limitSpec, bytes: spec.bytes },
            sizeOf(spec.size),
            limit,
          ),
        )
      }
      return figure
    },
    limits: async (specs) => {
      const started = performance.now()
      const measured = await measureInterleaved(
        specs.map((s) => s.sampler),
        budget,
        memory,
      )
      log(`limits (${specs.length}) in ${((performance.now() - started) / 1000).toFixed(1)} s`)
      const out = specs.map((s, i) => limitFigure(owner, s, sizeOf(s.size), measured[i]!))
      figures.push(...out)
      return out
    },
    record: (figure) => {
      const full = { ...figure, ...owner } as Figure
      figures.push(full)
      return full
    },
    sampleMemory: memory.sample,
    log,
  }

  return {
    ctx,
    figures,
    close: () => {
      for (const { ws, dir } of [...workspaces.values(), ...shapes.values()]) {
        ws.revert()
        rmSync(join(dir, "dirty"), { force: true })
      }
      rmSync(config.scratchDir, { recursive: true, force: true })
    },
  }
}
