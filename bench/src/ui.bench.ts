/**
 * `rewind ui` (issue 26): the built bin's inspector serving a session of 10,000 messages (5,000
 * turns; 1,000 in quick mode), opened in Debian's chromium (playwright-core): the time from a
 * fresh page load of the session's timeline to its rows on screen (the HTML, the app, the
 * `sessionHistory`, `listCheckpoints` and `listPoints` calls over /rpc, and the virtualised
 * render), against the same page for a 10-message session in the same rounds. Issue 26's target:
 * under a second. The rows in the DOM are counted too: the list is virtualised, so they stay a
 * screenful whatever the session's length.
 */
import { type ChildProcess, spawn } from "node:child_process"
import { existsSync } from "node:fs"
import { chromium } from "playwright-core"
import { openRewind } from "rewind"
import { summarize } from "./harness/stats.js"
import type { BenchCase, BenchContext } from "./harness/types.js"
import { REWIND_BIN } from "./shapes.bench.js"

const CHROMIUM = process.env.REWIND_CHROMIUM ?? "/usr/bin/chromium"

const must = <A>(o: { ok: true; value: A } | { ok: false; refusal: { message: string } }): A => {
  if (!o.ok) throw new Error(o.refusal.message)
  return o.value
}

/** A store (outside the workspace) with sessions of `sizes` messages; their ids, in order. */
const seed = async (root: string, dir: string, sizes: ReadonlyArray<number>) => {
  const rewind = await openRewind({ workspaceRoot: root, dir })
  const ids: Array<string> = []
  try {
    for (const messages of sizes) {
      const session = must(await rewind.createSession({ title: `${messages} messages`, cwd: root }))
      for (let i = 0; i < messages / 2; i++) {
        const { turnId } = must(
          await rewind.appendUserMessage(session.id, { text: `prompt ${i}: change the parser` }),
        )
        must(
          await rewind.appendReply(session.id, {
            turnId,
            parts: [{ kind: "text", text: `reply ${i}: done` }],
          }),
        )
        must(await rewind.completeTurn(session.id, turnId))
      }
      ids.push(session.id)
    }
  } finally {
    await rewind.close()
  }
  return ids
}

const startUi = (root: string, dir: string) =>
  new Promise<{ url: URL; child: ChildProcess }>((resolve, reject) => {
    const child = spawn(process.execPath, [REWIND_BIN, "ui", "--workspace", root, "--dir", dir], {
      stdio: ["ignore", "pipe", "pipe"],
    })
    let out = ""
    child.stdout!.setEncoding("utf8").on("data", (d: string) => {
      out += d
      if (out.includes("\n")) resolve({ url: new URL(out.split("\n")[0]!), child })
    })
    child.once("exit", (code) => reject(new Error(`rewind ui exited ${code}`)))
  })

const measure = async (ctx: BenchContext) => {
  const root = ctx.tempDir("ui-ws")
  const dir = ctx.tempDir("ui-store")
  const large = ctx.mode === "quick" ? 1_000 : 10_000
  const [bigId, smallId] = await seed(root, dir, [large, 10])
  const ui = await startUi(root, dir)
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--headless", "--no-sandbox"] })
  try {
    const base = `http://127.0.0.1:${ui.url.port}`
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } })
    await context.addCookies([
      { name: `rewind_ui_${ui.url.port}`, value: ui.url.searchParams.get("token")!, url: base },
    ])
    const load = async (sessionId: string, messages: number) => {
      const page = await context.newPage()
      const t = performance.now()
      await page.goto(`${base}/#/s/${sessionId}`)
      await page.getByText(`${messages} active messages`).waitFor()
      await page.locator(".row").first().waitFor()
      const ms = performance.now() - t
      const rows = await page.locator(".row").count()
      await page.close()
      return { ms, rows }
    }
    await load(smallId!, 10) // warm-up: the browser's first page and the server's first calls
    await load(bigId!, large)
    const rounds = ctx.mode === "quick" ? 3 : 10
    const subject: Array<number> = []
    const baseline: Array<number> = []
    let rendered = 0
    for (let i = 0; i < rounds; i++) {
      const big = await load(bigId!, large)
      rendered = Math.max(rendered, big.rows)
      subject.push(big.ms)
      baseline.push((await load(smallId!, 10)).ms)
    }
    const ratios = subject.map((s, i) => s / baseline[i]!)
    const s = summarize(subject)
    ctx.record({
      kind: "comparison",
      series: "rewind ui: timeline page load and render in chromium",
      size: { value: large, unit: "messages" },
      unit: "ms",
      subject: { label: `fresh load of a ${large}-message session's timeline to rows on screen`, stats: s },
      baseline: {
        label: "the same page for a 10-message session",
        stats: summarize(baseline),
        ratio: summarize(ratios),
      },
      target: { description: "issue 26: under 1 s", maxMedianMs: 1000, met: s.median < 1000 },
      notes: [
        `${rounds} rounds, alternating with the baseline, after a warm-up load of each; headless chromium ${CHROMIUM}`,
        `at most ${rendered} rows in the DOM at once (the list is virtualised)`,
      ],
    })
  } finally {
    await browser.close()
    ui.child.removeAllListeners("exit")
    ui.child.kill("SIGTERM")
  }
}

export const ui: BenchCase = {
  name: "ui",
  group: "server",
  description: "rewind ui in headless chromium: fresh load and render of a 10,000-message session's timeline",
  run: async (ctx) => {
    if (!existsSync(REWIND_BIN)) throw new Error(`${REWIND_BIN} is missing: build the rewind package first`)
    if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: apt-get install -y chromium`)
    await measure(ctx)
  },
}
