#!/usr/bin/env node
/**
 * The main job (`npm start`): a scripted agent session in a temporary workspace on the embedded
 * default store, narrated step by step — checkpoints recorded as the agent writes, a conversation
 * rewind, a preview refused because a file changed outside the agent, a cascade rewind, a fork,
 * and a redo of the cascade rewind. Each step is one `step(...)` call in `script`; its title line
 * is what the demo's test looks for.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { openRewind, type Rewind } from "../openRewind.js"
import { expectOk, runTurn } from "./scriptedAgent.js"

const tty = process.stdout.isTTY === true
const bold = (s: string) => (tty ? `\x1b[1m${s}\x1b[0m` : s)
const dim = (s: string) => (tty ? `\x1b[2m${s}\x1b[0m` : s)

let stepNumber = 0
const step = async (title: string, body: () => Promise<void>) => {
  stepNumber++
  console.log(`\n${bold(`${stepNumber}. ${title}`)}`)
  await body()
}
const say = (line: string) => console.log(`   ${line}`)

const script = async (rewind: Rewind) => {
  const root = rewind.workspaceRoot
  const read = (path: string) => readFileSync(join(root, path), "utf8")
  const session = expectOk(await rewind.createSession({ title: "demo: build a greeter", cwd: root }))
  say(dim(`workspace ${root}, store ${rewind.dir}, session ${session.id}`))
  const onCheckpoint = (c: {
    checkpointId: string
    path: string
    linesAdded: number
    linesRemoved: number
  }) => say(`checkpoint ${c.checkpointId}  ${c.path}  +${c.linesAdded} -${c.linesRemoved}`)

  let first: Awaited<ReturnType<typeof runTurn>> | undefined
  await step("The agent writes files; each write records a checkpoint", async () => {
    first = await runTurn(
      rewind,
      session.id,
      "Create a greeter module",
      [
        { path: "src/greet.js", content: 'export const greet = (name) => "Hello, " + name\n' },
        { path: "README.md", content: "# Greeter\n" },
      ],
      "Created src/greet.js and README.md.",
      onCheckpoint,
    )
  })

  await step("A conversation rewind drops a turn the user regrets; files are untouched", async () => {
    const aside = await runTurn(
      rewind,
      session.id,
      "What's the weather like?",
      [],
      "I cannot check the weather.",
    )
    const rewound = expectOk(await rewind.rewindConversation(session.id, aside.userMessageId))
    say(`removed ${rewound.removedMessageIds.length} message(s) from the active branch`)
    const log = expectOk(await rewind.transcript(session.id))
    say(
      `transcript now has ${log.length} message(s); src/greet.js still reads: ${read("src/greet.js").trim()}`,
    )
  })

  let second: Awaited<ReturnType<typeof runTurn>> | undefined
  await step("The agent makes a second change", async () => {
    second = await runTurn(
      rewind,
      session.id,
      "Make the greeting excited and document it",
      [
        { path: "src/greet.js", content: 'export const greet = (name) => "Hello, " + name + "!!!"\n' },
        { path: "README.md", content: "# Greeter\n\nGreets excitedly.\n" },
      ],
      "Greeting is now excited; README updated.",
      onCheckpoint,
    )
  })
  const turn = second!

  await step("Someone edits README.md outside the agent: the file rewind preview refuses", async () => {
    const agentVersion = read("README.md")
    writeFileSync(join(root, "README.md"), `${agentVersion}\nA note the user typed by hand.\n`)
    const preview = expectOk(await rewind.previewFileRewind({ sessionId: session.id, turnId: turn.turnId }))
    for (const u of preview.unsafe) say(`unsafe: ${u.path} (${u.reason})`)
    const applied = await rewind.applyFileRewind(preview)
    say(applied.ok ? "applied (unexpected)" : `refused (${applied.refusal.kind}): ${applied.refusal.message}`)
    say(`README.md kept the hand edit: ${read("README.md").includes("by hand")}`)
    // The user discards their note, so the workspace matches what the agent wrote again.
    writeFileSync(join(root, "README.md"), agentVersion)
    const again = expectOk(await rewind.previewFileRewind({ sessionId: session.id, turnId: turn.turnId }))
    say(`after discarding the note the preview can apply: ${again.canApply} (${again.files.length} file(s))`)
  })

  await step("A cascade rewind undoes the second turn: files and conversation", async () => {
    const result = expectOk(await rewind.rewindCascade(session.id, turn.userMessageId, "both"))
    for (const f of result.files) say(`${f.action.padEnd(10)} ${f.path}`)
    say(`src/greet.js reads: ${read("src/greet.js").trim()}`)
    say(`conversation cut ${result.conversation?.removedMessageIds.length ?? 0} message(s)`)
  })

  await step("Fork the session at the first turn's reply", async () => {
    const fork = expectOk(await rewind.forkAtMessage(session.id, first!.replyId))
    say(`child session ${fork.childSessionId} with ${fork.copiedMessageCount} copied message(s)`)
    const sessions = expectOk(await rewind.listSessions())
    for (const s of sessions) say(`${s.kind.padEnd(6)} ${s.sessionId}  ${s.title}`)
  })

  await step("Redo: bring back what the cascade rewind undid, files and conversation", async () => {
    const redone = expectOk(await rewind.redo(session.id))
    for (const f of redone.files) say(`${f.action.padEnd(10)} ${f.path}`)
    say(`src/greet.js reads again: ${read("src/greet.js").trim()}`)
    const log = expectOk(await rewind.transcript(session.id))
    say(`the conversation has ${log.length} message(s) again, the second turn included`)
  })
}

const main = async () => {
  const root = mkdtempSync(join(tmpdir(), "rewind-demo-"))
  let rewind: Rewind | undefined
  try {
    // The embedded default store; no fsync, since the workspace and store are deleted at the end.
    rewind = await openRewind({ workspaceRoot: root, durability: "atomic" })
    await script(rewind)
    console.log(`\n${bold("Done.")} ${dim(`(removing ${root})`)}`)
  } finally {
    await rewind?.close()
    rmSync(root, { recursive: true, force: true })
  }
}

main().catch((error: unknown) => {
  console.error(error)
  process.exitCode = 2
})
