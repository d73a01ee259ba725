/**
 * The hook problem log: what a hook could not do, kept next to the store
 * (`<store>/hooks/problems.jsonl`, one JSON object a line) so `rewind status` can say it, since
 * the agent never shows a hook's stderr prominently. It is a bounded diagnostic tail (the newest
 * `KEEP` entries), not a record of the session: nothing in it is needed to restore anything, and a
 * log that cannot be written or read is itself only reported, never fatal.
 */
import { appendFileSync, mkdirSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { replaceFile } from "../internal/replaceFile.js"

export interface HookProblem {
  /** Milliseconds since the epoch. */
  readonly at: number
  readonly agent: string
  /** The host's event name, or `(unparsed)` when the payload was not read. */
  readonly event: string
  readonly hostSessionId?: string
  readonly message: string
}

const KEEP = 200

export const problemLogPath = (storeDir: string) => join(storeDir, "hooks", "problems.jsonl")

/** Appends one problem; past twice the bound, the log is cut to the newest `KEEP` entries. */
export const appendProblem = (storeDir: string, problem: HookProblem): void => {
  const file = problemLogPath(storeDir)
  mkdirSync(join(storeDir, "hooks"), { recursive: true })
  appendFileSync(file, `${JSON.stringify(problem)}\n`)
  const lines = readFileSync(file, "utf8")
    .split("\n")
    .filter((l) => l.length > 0)
  if (lines.length > 2 * KEEP) {
    replaceFile(file, `${lines.slice(-KEEP).join("\n")}\n`)
  }
}

/** The logged problems, oldest first; a line that does not parse is skipped. */
export const readProblems = (storeDir: string): ReadonlyArray<HookProblem> => {
  let text: string
  try {
    text = readFileSync(problemLogPath(storeDir), "utf8")
  } catch {
    return []
  }
  const out: Array<HookProblem> = []
  for (const line of text.split("\n")) {
    if (line.length === 0) continue
    try {
      const value = JSON.parse(line) as HookProblem
      if (typeof value.message === "string" && typeof value.at === "number") out.push(value)
    } catch {
      // A torn last line (two hooks appending at once can interleave): not a problem to report.
    }
  }
  return out
}
