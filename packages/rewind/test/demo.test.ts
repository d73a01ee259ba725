/**
 * The main job (`npm start` runs the built demo): every step it promises is printed, in order,
 * with the line that shows the step happened, and it exits 0.
 */
import { execFile } from "node:child_process"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "@effect/vitest"

const DEMO = join(dirname(fileURLToPath(import.meta.url)), "..", "dist", "demo", "main.js")

const runDemo = () =>
  new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
    execFile(process.execPath, [DEMO], { encoding: "utf8" }, (error, stdout, stderr) => {
      resolve({
        code: error === null ? 0 : typeof error.code === "number" ? error.code : null,
        stdout,
        stderr,
      })
    })
  })

describe("the demo (npm start)", { timeout: 240_000 }, () => {
  it("prints each step and the line showing it happened", async () => {
    const { code, stdout, stderr } = await runDemo()
    expect(stderr).toBe("")
    expect(code).toBe(0)
    const expected: ReadonlyArray<RegExp> = [
      /^1\. The agent writes files; each write records a checkpoint$/,
      /^ {3}checkpoint \S+ {2}src\/greet\.js/,
      /^2\. A conversation rewind drops a turn/,
      /^ {3}removed 2 message\(s\) from the active branch$/,
      /^3\. The agent makes a second change$/,
      /^4\. Someone edits README\.md outside the agent: the file rewind preview refuses$/,
      /^ {3}unsafe: README\.md \(external_modified\)$/,
      /^ {3}refused \(unsafe_files\)/,
      /^ {3}README\.md kept the hand edit: true$/,
      /^5\. A cascade rewind undoes the second turn: files and conversation$/,
      /^ {3}restored {3}src\/greet\.js$/,
      /^ {3}conversation cut 2 message\(s\)$/,
      /^6\. Fork the session at the first turn's reply$/,
      /^ {3}child session \S+ with 2 copied message\(s\)$/,
      /^7\. Redo: bring back what the cascade rewind undid/,
      /^ {3}src\/greet\.js reads again: .*"!!!"$/,
      /^ {3}the conversation has 4 message\(s\) again/,
      /^Done\./,
    ]
    const lines = stdout.split("\n")
    let at = 0
    for (const pattern of expected) {
      const found = lines.findIndex((line, i) => i >= at && pattern.test(line))
      expect(found, `${pattern} after line ${at}`).toBeGreaterThanOrEqual(0)
      at = found + 1
    }
  })
})
