// The shipped `rewind` bin (the esbuild bundle) loads the fs adapter's native module from the
// installed @rewind/adapter-fs package, and `rewind doctor` says so (issue 23, item 1): the bundle
// used to look for it relative to its own file, fail, and fall back to JavaScript without a word.
// With the module unavailable (REWIND_NO_NATIVE=1 stands in for a machine that could not build
// it), doctor warns with the reason, and the store is still healthy.
import { execFile } from "node:child_process"
import { realpathSync } from "node:fs"
import { createRequire } from "node:module"
import { dirname, join } from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { BIN, jsonLines, tempDir } from "./cliHarness.js"

const run = (args: ReadonlyArray<string>, env: Record<string, string> = {}) =>
  new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
    execFile(
      process.execPath,
      [BIN, ...args],
      { encoding: "utf8", env: { ...process.env, NO_COLOR: "1", ...env } },
      (error, stdout, stderr) =>
        resolve({
          code: error === null ? 0 : typeof error.code === "number" ? error.code : null,
          stdout,
          stderr,
        }),
    )
  })

/** The installed fs adapter's own build of the module. */
const adapterModule = realpathSync(
  join(
    dirname(createRequire(import.meta.url).resolve("@rewind/adapter-fs")),
    "..",
    "build",
    "Release",
    "dirscan.node",
  ),
)

describe("the built rewind bin and the native module", () => {
  it.skipIf(process.platform !== "linux")(
    "loads dirscan.node from the fs adapter package: doctor reports the native scanner and kernel-confined files",
    async () => {
      const root = tempDir()
      expect((await run(["init", "--workspace", root])).code).toBe(0)
      const doctor = await run(["doctor", "--json", "--workspace", root])
      expect(doctor.code).toBe(0)
      const statusRun = await run(["status", "--json", "--workspace", root])
      expect(statusRun.code).toBe(0)
      expect(jsonLines(statusRun.stdout).find((r) => r.type === "native")).toMatchObject({
        loaded: true,
        scanner: "native",
        fileOperations: "kernel-confined",
      })
      const [report] = jsonLines(doctor.stdout)
      expect(report).toMatchObject({
        type: "doctor",
        ok: true,
        native: {
          loaded: true,
          path: adapterModule,
          scanner: "native",
          fileOperations: "kernel-confined",
          warning: null,
        },
      })
    },
  )

  it("reports a missing native module as a warning with the reason, never silently", async () => {
    const root = tempDir()
    expect((await run(["init", "--workspace", root])).code).toBe(0)
    const json = await run(["doctor", "--json", "--workspace", root], { REWIND_NO_NATIVE: "1" })
    expect(json.code).toBe(0)
    const [report] = jsonLines(json.stdout)
    expect(report).toMatchObject({
      ok: true,
      native: { loaded: false, path: null, scanner: "javascript", fileOperations: "checked" },
    })
    expect(String((report!.native as { warning: string }).warning)).toContain(
      "disabled by REWIND_NO_NATIVE=1",
    )
    // status says it too, once, in a line of its own.
    const statusHuman = await run(["status", "--workspace", root], { REWIND_NO_NATIVE: "1" })
    expect(statusHuman.code).toBe(0)
    expect(statusHuman.stdout.match(/did not load: disabled by REWIND_NO_NATIVE=1/g)?.length).toBe(1)
    const human = await run(["doctor", "--workspace", root], { REWIND_NO_NATIVE: "1" })
    expect(human.stdout).toMatch(
      /native module\s+warning\s+the native module .* did not load: disabled by REWIND_NO_NATIVE=1/,
    )
  })
})
