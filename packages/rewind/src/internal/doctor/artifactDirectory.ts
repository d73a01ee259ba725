/**
 * Doctor's last step, for the embedded default only (an FsArtifactStore directory beside the
 * database): leftover files. Temp files of blob writes are split by age: older than the grace
 * window they are orphans (`repair` removes them), younger ones are a write in flight in another
 * process and left alone. Files in `objects/` that are not blobs are reported and never touched.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { Clock, Effect, Either } from "effect"
import type { Findings } from "./findings.js"
import { DEFAULT_TEMP_GRACE_MS, type DoctorOptions, type DoctorReport } from "./report.js"

const TEMP_NAME = /^\..*\.tmp$/
const SHARD = /^[0-9a-f]{2}$/
const REST = /^[0-9a-f]{62}$/

interface TempScan {
  readonly orphans: ReadonlyArray<string>
  readonly inFlight: number
  readonly stray: ReadonlyArray<string>
}

/**
 * Leftover files in an FsArtifactStore directory: temp files under `tmp/` (and temp-named files in
 * a shard, from older layouts) split by age, and files in `objects/` that are not blobs.
 */
const scanArtifactDirectory = (directory: string, now: number, graceMs: number): TempScan => {
  const orphans: Array<string> = []
  const stray: Array<string> = []
  let inFlight = 0
  const consider = (file: string) => {
    const stat = fs.lstatSync(file, { throwIfNoEntry: false })
    if (stat === undefined || !stat.isFile()) return
    if (now - stat.mtimeMs >= graceMs) orphans.push(file)
    else inFlight++
  }
  const list = (dir: string) => {
    try {
      return fs.readdirSync(dir)
    } catch {
      return []
    }
  }
  const temp = path.join(directory, "tmp")
  for (const name of list(temp)) consider(path.join(temp, name))
  const objects = path.join(directory, "objects")
  for (const shard of list(objects)) {
    const shardDir = path.join(objects, shard)
    if (!SHARD.test(shard)) {
      stray.push(shardDir)
      continue
    }
    for (const name of list(shardDir)) {
      if (REST.test(name)) continue
      if (TEMP_NAME.test(name)) consider(path.join(shardDir, name))
      else stray.push(path.join(shardDir, name))
    }
  }
  return { orphans, inFlight, stray }
}

export const checkArtifactDirectory = (findings: Findings, options: DoctorOptions) =>
  Effect.gen(function* () {
    const repaired: Array<string> = []
    if (options.artifactsDirectory === undefined) {
      return { tempFiles: { orphans: 0, removed: 0, inFlight: 0 }, repaired }
    }
    const now = yield* Clock.currentTimeMillis
    const scan = scanArtifactDirectory(
      options.artifactsDirectory,
      now,
      options.tempGraceMs ?? DEFAULT_TEMP_GRACE_MS,
    )
    let removed = 0
    for (const file of scan.orphans) {
      if (options.repair === true) {
        const outcome = yield* Effect.either(Effect.try(() => fs.unlinkSync(file)))
        if (Either.isRight(outcome)) {
          removed++
          repaired.push(`removed orphan temp file ${file}`)
          continue
        }
      }
      findings.problem(
        "orphan_temp_file",
        file,
        `${file} is a temp file of a blob write that never finished`,
        true,
      )
    }
    for (const file of scan.stray) {
      findings.problem(
        "stray_file",
        file,
        `${file} is in the blob directory but is not a blob; it was left alone`,
      )
    }
    const tempFiles: DoctorReport["tempFiles"] = {
      orphans: scan.orphans.length,
      removed,
      inFlight: scan.inFlight,
    }
    return { tempFiles, repaired }
  })
