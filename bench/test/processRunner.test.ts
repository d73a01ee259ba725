// Baseline processes go through the helper: spawned by it (not by the process under measurement),
// with the same answers `spawnSync` gives (output split across reads, failures, cwd and env).
import { describe, expect, it } from "@effect/vitest"
import { startProcessRunner, stopProcessRunner } from "../src/harness/processRunner.js"
import { ProcessFailed, timeProcess } from "../src/harness/processTiming.js"

describe("the process runner", () => {
  it("spawns baselines from its helper process, answering as spawnSync would", () => {
    startProcessRunner()
    try {
      // The spawned shell's parent is the helper, not this process.
      const parent = Number(timeProcess("sh", ["-c", "echo $PPID"]).stdout.trim())
      expect(parent).toBeGreaterThan(0)
      expect(parent).not.toBe(process.pid)
      const again = Number(timeProcess("sh", ["-c", "echo $PPID"]).stdout.trim())
      expect(again).toBe(parent)

      // Output larger than one read, with characters that a read may split.
      const lines = timeProcess("sh", [
        "-c",
        'i=0; while [ $i -lt 20000 ]; do echo "héllo ✓ $i"; i=$((i+1)); done',
      ])
        .stdout.trimEnd()
        .split("\n")
      expect(lines).toHaveLength(20_000)
      expect(lines[19_999]).toBe("héllo ✓ 19999")
      expect(lines.every((l) => l.startsWith("héllo ✓ "))).toBe(true)

      expect(timeProcess("pwd", [], { cwd: "/tmp" }).stdout.trim()).toBe("/tmp")
      expect(
        timeProcess("sh", ["-c", "echo $RUNNER_TEST"], { env: { ...process.env, RUNNER_TEST: "x y" } })
          .stdout,
      ).toBe("x y\n")
      const failed = (() => {
        try {
          timeProcess("sh", ["-c", "echo nope >&2; exit 3"])
        } catch (error) {
          return error
        }
      })()
      expect(failed).toBeInstanceOf(ProcessFailed)
      expect((failed as ProcessFailed).status).toBe(3)
      expect((failed as ProcessFailed).stderr).toBe("nope\n")
      expect(() => timeProcess("/no/such/binary", [])).toThrow(/ENOENT/)
      expect(timeProcess("sh", ["-c", "exit 1"], { okCodes: [1] }).ms).toBeGreaterThan(0)
    } finally {
      stopProcessRunner()
    }
    // Stopped: a later call starts a new helper.
    const after = Number(timeProcess("sh", ["-c", "echo $PPID"]).stdout.trim())
    expect(after).not.toBe(process.pid)
    stopProcessRunner()
  })
})
