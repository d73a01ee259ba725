// Shared fixtures of the isolated-fork tests (embedded default, real files): temp directories
// removed after each test, a tree snapshot (bytes, modes, links) to compare trees exactly, and a
// parent session with one completed turn (a point, a pinned boundary) forked into a new tree.
import { lstatSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterEach } from "@effect/vitest"
import type { SessionId, TurnId } from "@rewind/contracts"
import { openRewind, type Rewind } from "../src/index.js"
import { okValue } from "./okValue.js"

/** A maker of temp directories, all removed after each test of the file that calls it. */
export const tempDirs = (prefix: string) => {
  const temps: Array<string> = []
  afterEach(() => {
    for (const dir of temps.splice(0)) rmSync(dir, { recursive: true, force: true })
  })
  return () => {
    const dir = mkdtempSync(join(tmpdir(), `rewind-isolated-${prefix}-`))
    temps.push(dir)
    return dir
  }
}

/** Everything in a tree but the store: path → kind, mode and bytes, or link target. */
export const snapshot = (root: string): Map<string, string> => {
  const out = new Map<string, string>()
  const walk = (dir: string, rel: string) => {
    for (const name of readdirSync(dir).sort()) {
      if (rel === "" && name === ".rewind") continue
      const path = join(dir, name)
      const r = rel === "" ? name : `${rel}/${name}`
      const s = lstatSync(path)
      if (s.isSymbolicLink()) out.set(r, `link:${readlinkSync(path)}`)
      else if (s.isDirectory()) walk(path, r)
      else out.set(r, `file:${(s.mode & 0o777).toString(8)}:${readFileSync(path).toString("base64")}`)
    }
  }
  walk(root, "")
  return out
}

/** One completed turn: the prompt, a point of the tree as it is, the reply with a pinned boundary. */
export const completedTurn = async (rewind: Rewind, sessionId: SessionId, text: string) => {
  const { turnId } = okValue(await rewind.appendUserMessage(sessionId, { text }))
  okValue(await rewind.capturePoint(sessionId, turnId as TurnId))
  const reply = okValue(
    await rewind.appendReply(sessionId, { turnId, parts: [{ kind: "text", text: "ok" }] }),
  )
  okValue(await rewind.completeTurnWithBoundary(sessionId, turnId))
  return reply.messageId
}

/** Opens Rewind on `root` (already filled), runs one turn and forks it into a new tree `into`. */
export const parentAndFork = async (root: string, into: string) => {
  const rewind = await openRewind({ workspaceRoot: root, durability: "atomic" })
  const session = okValue(await rewind.createSession({ title: "p", cwd: root }))
  const reply = await completedTurn(rewind, session.id, "go")
  const fork = okValue(
    await rewind.forkAtMessage(session.id, reply, undefined, { mode: "isolated", root: into }),
  )
  return { rewind, parent: session.id, child: fork.childSessionId as SessionId }
}
