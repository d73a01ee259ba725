/**
 * `rewind doctor [--repair]`: the store health check (internal/doctor.ts) as a table of checks,
 * with the native module, the live engine and the hook client; problems make the run partial
 * (exit 1), and say whether `--repair` can fix them.
 */
import { Command, Options } from "@effect/cli"
import { Effect } from "effect"
import { liveEngineStatus } from "../internal/doctor.js"
import { codeCacheStatus } from "./codeCache.js"
import { CliFailure, dim, ExitCode, green, red, table, yellow } from "./output.js"
import { common, expect, withRewind } from "./store.js"

export const doctor = Command.make(
  "doctor",
  {
    ...common,
    repair: Options.boolean("repair").pipe(
      Options.withDescription(
        "Also remove what is safe to remove (orphan temp files of interrupted blob writes)",
      ),
    ),
  },
  (o) =>
    withRewind(o, false, (rewind, out) =>
      Effect.gen(function* () {
        const report = yield* expect(
          rewind.doctor({
            repair: o.repair,
            onProgress: (n) => out.progress(`verifying artifacts… ${n}`),
          }),
        ).pipe(Effect.ensuring(Effect.sync(out.endProgress)))
        const codeCache = codeCacheStatus()
        yield* out.record("doctor", {
          ok: report.ok,
          database: report.database ?? null,
          schemaVersion: report.schemaVersion ?? null,
          artifacts: report.artifacts,
          references: report.references,
          journal: report.journal,
          tempFiles: report.tempFiles,
          problems: report.problems,
          repaired: report.repaired,
          native: report.native,
          liveEngine: liveEngineStatus(),
          codeCache,
        })
        const live = liveEngineStatus()
        const { hookClientStatus } = yield* Effect.promise(() => import("../hooks/nativeClient.js"))
        const hookClient = hookClientStatus(rewind.workspaceRoot, process.argv[1])
        yield* out.record("hook_client", { ...hookClient })
        const mark = (ok: boolean) => (ok ? green("ok") : red("FAILED"))
        const has = (...kinds: ReadonlyArray<string>) => report.problems.some((p) => kinds.includes(p.kind))
        yield* out.human(
          table(
            ["CHECK", "RESULT", "DETAIL"],
            [
              ["store opens", green("ok"), rewind.dir ?? ""],
              [
                "sqlite integrity",
                report.database === undefined ? dim("n/a") : mark(report.database.ok),
                report.database?.problems.join("; ") ?? "",
              ],
              [
                "schema version",
                report.schemaVersion === undefined ? dim("n/a") : green("ok"),
                report.schemaVersion === undefined ? "" : String(report.schemaVersion),
              ],
              [
                "artifact hashes",
                mark(report.artifacts.bad.length === 0),
                `${report.artifacts.checked} checked, ${report.artifacts.bytes} bytes, ${report.artifacts.bad.length} bad`,
              ],
              [
                "references",
                mark(!has("missing_blob", "manifest_unreadable", "missing_parent", "stream_unreadable")),
                `${report.references.checked} followed in ${report.references.sessions} session(s)`,
              ],
              [
                "operation journal",
                mark(!has("incomplete_operation", "journal_unreadable")),
                `${report.journal.operations} operation(s), ${report.journal.incomplete} incomplete`,
              ],
              [
                "temp files",
                mark(!has("orphan_temp_file", "stray_file")),
                `${report.tempFiles.orphans} orphan(s), ${report.tempFiles.removed} removed, ${report.tempFiles.inFlight} in flight`,
              ],
              [
                "native module",
                report.native.warning === null ? green("ok") : yellow("warning"),
                report.native.loaded
                  ? `${report.native.scanner} scanner, ${report.native.fileOperations} file operations, reads: ${report.native.reads}${report.native.warning === null ? "" : `: ${report.native.warning}`}`
                  : (report.native.warning ?? ""),
              ],
              ["live engine", live.available ? green("ok") : yellow("warning"), live.detail],
              [
                "code cache",
                codeCache.usable ? green("ok") : yellow("warning"),
                codeCache.dir ?? codeCache.warning ?? "",
              ],
              [
                "hook client",
                hookClient.warning === null ? green("ok") : yellow("warning"),
                hookClient.warning ?? hookClient.detail,
              ],
            ],
          ),
        )
        for (const p of report.problems) yield* out.human(`${red(p.kind)} ${p.message}`)
        for (const line of report.repaired) yield* out.human(`${green("repaired")} ${line}`)
        if (!report.ok) {
          const repairable = report.problems.every((p) => p.repairable)
          return yield* new CliFailure({
            code: ExitCode.partial,
            message: repairable
              ? "doctor found problems that `rewind doctor --repair` can fix"
              : "the store opens but doctor found problems",
            reason: "doctor_problems",
          })
        }
      }),
    ),
).pipe(
  Command.withDescription(
    "Check the store: SQLite integrity and schema version, every artifact's hash, every reference, the journal, temp files (--repair removes orphan temp files)",
  ),
)
