/**
 * Child-process entry point: runs one case at one size (named in BENCH_CASE_RUN, set by main.ts)
 * and writes its result as JSON to the file named there. A process per case run means each has its
 * own peak RSS and starts with a clean heap.
 */
import { writeFileSync } from "node:fs"
import { CASE_LOADERS } from "./caseLoaders.js"
import { runCase } from "./harness/caseRun.js"
import type { CaseRunConfig } from "./harness/context.js"

interface ChildConfig extends CaseRunConfig {
  readonly resultFile: string
}

const raw = process.env.BENCH_CASE_RUN
if (raw === undefined) {
  console.error("runCase.ts is started by main.ts (npm run bench), not directly")
  process.exit(2)
}
const config = JSON.parse(raw) as ChildConfig
const load = CASE_LOADERS[config.caseName]
if (load === undefined) {
  console.error(`no case named ${config.caseName}`)
  process.exit(2)
}
const tag = `[${config.caseName}${config.size === undefined ? "" : `@${config.size}`}]`
const result = await runCase(await load(), config, (message) => console.error(`${tag} ${message}`))
writeFileSync(config.resultFile, JSON.stringify(result))
