/**
 * Helpers of the `rewind ui` end-to-end test: a scripted session written through the facade (two
 * conversation rewinds, a fork, a side chat, checkpoints, points, a compaction, a background
 * task), the BUILT bin's `rewind ui` spawned on it, and the browser (Debian's chromium through
 * playwright-core). A missing chromium fails the test unless REWIND_SKIP_BROWSER=1 says to skip.
 */
import { type ChildProcess, spawn } from "node:child_process"
import { existsSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { openRewind } from "../src/index.js"
import { BIN } from "./cliHarness.js"

export const CHROMIUM = process.env.REWIND_CHROMIUM ?? "/usr/bin/chromium"
export const skipBrowser = process.env.REWIND_SKIP_BROWSER === "1"
export const chromiumMissing = () =>
  existsSync(CHROMIUM)
    ? undefined
    : `${CHROMIUM} is missing: apt-get install -y chromium (or set REWIND_SKIP_BROWSER=1 to skip this test)`

const must = <A>(o: { ok: true; value: A } | { ok: false; refusal: { message: string } }): A => {
  if (!o.ok) throw new Error(o.refusal.message)
  return o.value
}

/** The scripted session; answers the ids the test looks for. */
export const scriptedWorkspace = async (root: string) => {
  const rewind = await openRewind({ workspaceRoot: root, durability: "atomic" })
  const main = must(await rewind.createSession({ title: "refactor the parser", cwd: root }))
  const sid = main.id
  let before: string | null = null
  const turn = async (prompt: string, path: string, content: string, pin = false) => {
    const { messageId, turnId } = must(await rewind.appendUserMessage(sid, { text: prompt }))
    must(await rewind.capturePoint(sid, turnId))
    const previous = path === "a.txt" ? before : null
    writeFileSync(join(root, path), content)
    must(
      await rewind.recordFileMutation({
        sessionId: sid,
        turnId,
        path,
        toolName: "write",
        before: previous,
        after: content,
      }),
    )
    if (path === "a.txt") before = content
    const reply = must(
      await rewind.appendReply(sid, { turnId, parts: [{ kind: "text", text: `wrote ${path}` }] }),
    )
    if (pin) must(await rewind.completeTurnWithBoundary(sid, turnId))
    else must(await rewind.completeTurn(sid, turnId))
    return { messageId, turnId, replyId: reply.messageId }
  }
  const t1 = await turn("write the first version of a.txt", "a.txt", "one\nshared line\n", true)
  const t2 = await turn("change a.txt to two", "a.txt", "two\nshared line\n")
  // A task's description is often a command line with a long path: one word the phone-width
  // layout must still wrap (as it must the random turn id shown beside it).
  must(
    await rewind.startBackgroundTask(
      sid,
      t2.turnId,
      "run the test watcher on packages/rewind/test/uiHarness.ts,packages/ui-app/src/TimelinePage.tsx",
    ),
  )
  must(await rewind.rewindConversation(sid, t2.messageId))
  const t3 = await turn(
    "<img src=x onerror=alert(1)> try b.txt instead",
    "b.txt",
    "<script>alert(1)</script>\n",
  )
  must(await rewind.rewindConversation(sid, t3.messageId))
  const t4 = await turn("make a.txt four", "a.txt", "four\nshared line\n", true)
  // The agent also made a new file in that turn: "before this turn" has no such file.
  writeFileSync(join(root, "notes.md"), "made in turn four\n")
  must(
    await rewind.recordFileMutation({
      sessionId: sid,
      turnId: t4.turnId,
      path: "notes.md",
      toolName: "write",
      before: null,
      after: "made in turn four\n",
    }),
  )
  must(
    await rewind.applyCompaction(sid, {
      fromMessageId: t1.messageId,
      toMessageId: t1.replyId,
      summaryText: "wrote a.txt",
    }),
  )
  const fork = must(await rewind.forkAtMessage(sid, t1.replyId))
  const side = must(await rewind.createSideChat(sid))
  await rewind.close()
  return {
    sessionId: sid as string,
    t1,
    t2,
    t3,
    t4,
    forkId: fork.childSessionId as string,
    sideId: side.childSessionId as string,
  }
}

/**
 * A session of `turns` completed turns (a prompt and a reply each: 2 × turns history entries),
 * written through the facade; answers the last reply's id. Opens and closes its own Rewind.
 */
export const longSession = async (root: string, turns: number) => {
  const rewind = await openRewind({ workspaceRoot: root, durability: "atomic" })
  try {
    const sid = must(await rewind.createSession({ title: "a long session", cwd: root })).id
    let last = ""
    for (let i = 1; i <= turns; i++) last = (await appendTurn(rewind, sid, `prompt ${i}`)).replyId
    return { sessionId: sid as string, lastReplyId: last }
  } finally {
    await rewind.close()
  }
}

/** One completed turn (prompt, reply `reply to <prompt>`) appended to `sessionId`. */
export const appendTurn = async (
  rewind: Awaited<ReturnType<typeof openRewind>>,
  sessionId: Parameters<Awaited<ReturnType<typeof openRewind>>["appendUserMessage"]>[0],
  prompt: string,
) => {
  const { messageId, turnId } = must(await rewind.appendUserMessage(sessionId, { text: prompt }))
  const reply = must(
    await rewind.appendReply(sessionId, { turnId, parts: [{ kind: "text", text: `reply to ${prompt}` }] }),
  )
  must(await rewind.completeTurn(sessionId, turnId))
  return { messageId, replyId: reply.messageId as string }
}

/** `rewind ui` of the built bin on `root`; resolves with its printed URL once it listens. */
export const startUi = (root: string) =>
  new Promise<{ url: string; port: number; token: string; child: ChildProcess }>((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, "ui", "--workspace", root], {
      stdio: ["ignore", "pipe", "pipe"],
      env: { ...process.env, NO_COLOR: "1" },
    })
    let out = ""
    let err = ""
    child.stdout!.on("data", (chunk: Buffer) => {
      out += chunk.toString()
      const line = out.split("\n")[0]!
      if (out.includes("\n")) {
        const url = new URL(line)
        resolve({ url: line, port: Number(url.port), token: url.searchParams.get("token")!, child })
      }
    })
    child.stderr!.on("data", (chunk: Buffer) => {
      err += chunk.toString()
    })
    child.on("exit", (code) => reject(new Error(`rewind ui exited ${code}: ${err}`)))
  })

export const stopUi = (child: ChildProcess) =>
  new Promise<number | null>((resolve) => {
    if (child.exitCode !== null) return resolve(child.exitCode)
    child.removeAllListeners("exit")
    child.once("exit", (code) => resolve(code))
    child.kill("SIGTERM")
  })
