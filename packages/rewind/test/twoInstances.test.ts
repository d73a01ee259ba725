// Two openRewind instances on one store in one process (issue 21 item 14): SQLite's busy wait is
// synchronous, so a connection waiting the whole busy timeout for the other's lock blocked the
// event loop, and with it the other instance's transaction: 4 appends took ~10 s and some failed.
// The wait inside SQLite is now short and the rest is retried asynchronously, so with a busy
// timeout of a minute the appends still finish at once (well within the test's bound).
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterEach, describe, expect, it } from "@effect/vitest"
import { openRewind } from "../src/index.js"

const temps: Array<string> = []
afterEach(() => {
  for (const dir of temps.splice(0)) rmSync(dir, { recursive: true, force: true })
})

describe("two instances on one store in one process", () => {
  it(
    "interleaved appends of both all succeed without waiting out the busy timeout",
    { timeout: 30_000 },
    async () => {
      const root = mkdtempSync(join(tmpdir(), "rewind-two-"))
      temps.push(root)
      // A minute: waiting it out even once would exceed the test's bound.
      const options = {
        workspaceRoot: root,
        durability: "atomic",
        sqlite: { busyTimeoutMillis: 60_000 },
      } as const
      const a = await openRewind(options)
      const b = await openRewind(options)
      const sa = await a.createSession({ title: "a", cwd: root })
      const sb = await b.createSession({ title: "b", cwd: root })
      if (!sa.ok || !sb.ok) throw new Error("no session")
      const answers = await Promise.all(
        Array.from({ length: 8 }, (_, i) =>
          i % 2 === 0
            ? a.appendUserMessage(sa.value.id, { text: `a${i}` })
            : b.appendUserMessage(sb.value.id, { text: `b${i}` }),
        ),
      )
      expect(answers.map((o) => o.ok)).toEqual(Array(8).fill(true))
      const ta = await a.transcript(sa.value.id)
      const tb = await b.transcript(sb.value.id)
      expect(ta.ok && ta.value.length).toBe(4)
      expect(tb.ok && tb.value.length).toBe(4)
      await a.close()
      await b.close()
    },
  )
})
