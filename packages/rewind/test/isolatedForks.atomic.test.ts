// Atomic materialisation of an isolated fork's tree (embedded default, real files): the tree is
// written into a private directory beside the target and renamed into place in one step. Two forks
// racing into one target (held at the rename until both have written their trees): one wins whole,
// the other is refused `workspace_refused` / `taken` and leaves nothing. A failure injected midway
// through the bulk write (the fault-injecting workspace over the real staging directory) leaves no
// target, no private directory, no child and no pending operation. Crashes (every compensation
// lost, as when the process dies) before the rename, between the rename and the commit, and after
// the commit: `recover()` lists the journaled tree and `resolveOperation` removes the private
// directory, reports a tree left without a session, or closes the record of a committed child.
import { existsSync, mkdirSync, readdirSync, symlinkSync, writeFileSync } from "node:fs"
import { dirname, join } from "node:path"
import { describe, expect, it } from "@effect/vitest"
import type { CommandId, MessageId, SessionId } from "@rewind/contracts"
import { forkAtMessage, OperationJournal, SessionStore, Workspaces } from "@rewind/core"
import { makeFaultyWorkspace } from "@rewind/testkit"
import { Deferred, Effect, Exit } from "effect"
import { openRewind, type Rewind } from "../src/index.js"
import { completedTurn, snapshot, tempDirs } from "./isolatedForkKit.js"
import { okValue } from "./okValue.js"

const temp = tempDirs("atomic")

const FILES = 40

/** A parent tree of `FILES` files in a few directories, a mode and a link; one completed turn. */
const parent = async () => {
  const root = temp()
  for (let i = 0; i < FILES; i++) {
    const dir = join(root, `d${i % 4}`, `e${i % 3}`)
    mkdirSync(dir, { recursive: true })
    writeFileSync(join(dir, `f${i}.txt`), `file ${i}\n`.repeat(i + 1))
  }
  symlinkSync("d0/e0/f0.txt", join(root, "link"))
  const rewind = await openRewind({ workspaceRoot: root, durability: "atomic" })
  const session = okValue(await rewind.createSession({ title: "p", cwd: root }))
  const reply = (await completedTurn(rewind, session.id, "go")) as MessageId
  return { root, rewind, sessionId: session.id as SessionId, reply }
}

/** Runs a core program through the facade (its services include the Workspaces). */
const run = <A, E, R>(rewind: Rewind, effect: Effect.Effect<A, E, R>) =>
  rewind.run(Effect.exit(effect) as Effect.Effect<Exit.Exit<A, E>, never, never>)

const fork = (sessionId: SessionId, reply: MessageId, root: string, commandId: string) =>
  forkAtMessage({
    sessionId,
    messageId: reply,
    commandId: commandId as CommandId,
    workspace: { mode: "isolated", root },
  })

/** Entries beside the target: the private directories a fork leaves would show here. */
const besides = (into: string) => readdirSync(dirname(into)).sort()

const sessionsCount = async (rewind: Rewind) => okValue(await rewind.listSessions()).length

const failureOf = (exit: Exit.Exit<unknown, unknown>) => {
  if (Exit.isSuccess(exit)) throw new Error("expected a failure")
  return exit.cause
}

describe("atomic materialisation of an isolated fork", () => {
  it("two forks racing into one target: one tree whole, the other refused `taken`, nothing left over", async () => {
    const { root, rewind, sessionId, reply } = await parent()
    try {
      const into = join(temp(), "tree")
      const before = await sessionsCount(rewind)
      // Each fork is held before its rename until both have staged and written their trees, so
      // both really are in flight at once; then they race for the rename.
      const program = Effect.gen(function* () {
        const staged = yield* Deferred.make<void>()
        let count = 0
        const held = Effect.updateService(Workspaces, (ws) => ({
          ...ws,
          stage: (tree) =>
            Effect.tap(ws.stage(tree), () =>
              ++count === 2 ? Deferred.succeed(staged, undefined) : Effect.void,
            ),
          publish: (tree) => Effect.zipRight(Deferred.await(staged), ws.publish(tree)),
        }))
        return yield* Effect.all(
          [
            Effect.either(held(fork(sessionId, reply, into, "cmd-a"))),
            Effect.either(held(fork(sessionId, reply, into, "cmd-b"))),
          ],
          { concurrency: 2 },
        )
      })
      const exit = await run(rewind, program)
      if (!Exit.isSuccess(exit)) throw new Error(String(exit.cause))
      const outcomes = exit.value
      const won = outcomes.filter((o) => o._tag === "Right")
      const lost = outcomes.filter((o) => o._tag === "Left")
      expect(won.length).toBe(1)
      expect(lost.length).toBe(1)
      expect(lost[0]!.left).toMatchObject({ kind: "workspace_refused", details: { reason: "taken" } })
      // The winner's tree is the parent's, whole: bytes, modes, links.
      expect(snapshot(into)).toEqual(snapshot(root))
      expect(besides(into)).toEqual(["tree"])
      expect(await sessionsCount(rewind)).toBe(before + 1)
      expect(okValue(await rewind.recover())).toEqual([])
    } finally {
      await rewind.close()
    }
  })

  it("two forks into one target through the facade at once: exactly one succeeds, typed refusal for the other", async () => {
    const { root, rewind, sessionId, reply } = await parent()
    try {
      const into = join(temp(), "tree")
      const [a, b] = await Promise.all([
        rewind.forkAtMessage(sessionId, reply, undefined, { mode: "isolated", root: into }),
        rewind.forkAtMessage(sessionId, reply, undefined, { mode: "isolated", root: into }),
      ])
      const oks = [a, b].filter((o) => o.ok)
      const refusals = [a, b].flatMap((o) => (o.ok ? [] : [o.refusal]))
      expect(oks.length).toBe(1)
      expect(refusals.map((r) => r.kind)).toEqual(["workspace_refused"])
      expect(["taken", "not_empty"]).toContain((refusals[0]!.details as { reason: string }).reason)
      expect(snapshot(into)).toEqual(snapshot(root))
      expect(besides(into)).toEqual(["tree"])
    } finally {
      await rewind.close()
    }
  })

  it("a failure midway through the bulk write leaves no target, no private directory, no child", async () => {
    const { rewind, sessionId, reply } = await parent()
    try {
      const into = join(temp(), "tree")
      const before = await sessionsCount(rewind)
      let staging: string | undefined
      const faulty = Effect.updateService(Workspaces, (ws) => ({
        ...ws,
        stage: (tree) =>
          Effect.map(ws.stage(tree), (inner) => {
            staging = tree.staging
            const { service, control } = makeFaultyWorkspace(inner)
            control.inject({ operation: "createFiles", nth: Math.floor(FILES / 2) })
            return service
          }),
      }))
      const exit = await run(rewind, faulty(fork(sessionId, reply, into, "cmd-fault")))
      expect(String(failureOf(exit))).toMatch(/injected fault/)
      expect(staging).toBeDefined()
      expect(existsSync(staging!)).toBe(false)
      expect(existsSync(into)).toBe(false)
      expect(besides(into)).toEqual([])
      expect(await sessionsCount(rewind)).toBe(before)
      // Journaled, then closed as rolled back: nothing for recover().
      expect(okValue(await rewind.recover())).toEqual([])
      // The same target is free for the next fork.
      okValue(await rewind.forkAtMessage(sessionId, reply, undefined, { mode: "isolated", root: into }))
      expect(existsSync(join(into, "d0", "e0", "f0.txt"))).toBe(true)
    } finally {
      await rewind.close()
    }
  })
})

/** Every compensation lost, as when the process dies: nothing is removed and the journal stays open. */
const crashing = <A, E, R>(effect: Effect.Effect<A, E, R>, crashAt: "publish" | "commit" | "complete") =>
  effect.pipe(
    Effect.updateService(Workspaces, (ws) => ({
      ...ws,
      publish: (tree) =>
        crashAt === "publish" ? Effect.dieMessage("crash before the rename") : ws.publish(tree),
      discard: () => Effect.succeed(false),
      unpublish: () => Effect.succeed(false),
    })),
    Effect.updateService(OperationJournal, (journal) => ({
      ...journal,
      complete: () => Effect.void,
    })),
    Effect.updateService(SessionStore, (store) => ({
      ...store,
      commit: (request: Parameters<typeof store.commit>[0]) =>
        crashAt === "commit" ? Effect.dieMessage("crash before the commit") : store.commit(request),
    })),
  )

describe("recover() of an interrupted materialisation", () => {
  it("a crash before the rename: listed with its private directory, which rollback removes", async () => {
    const { rewind, sessionId, reply } = await parent()
    try {
      const into = join(temp(), "tree")
      const exit = await run(rewind, crashing(fork(sessionId, reply, into, "cmd-crash"), "publish"))
      expect(Exit.isFailure(exit)).toBe(true)
      const [left] = besides(into)
      expect(left).toMatch(/^\.tree\.rewind-op_/)
      expect(existsSync(into)).toBe(false)

      const [op, ...rest] = okValue(await rewind.recover())
      expect(rest).toEqual([])
      expect(op!.record.intent.kind).toBe("fork_materialise")
      expect(op!.recorded).toBe(false)
      expect(op!.resolvable).toBe(true)
      expect(op!.tree).toMatchObject({
        root: into,
        staging: join(dirname(into), left!),
        state: { staging: "present", root: "missing" },
      })
      const operationId = op!.record.intent.operationId
      const continued = await rewind.resolveOperation(operationId, "continue")
      expect(continued.ok).toBe(false)
      const resolved = okValue(await rewind.resolveOperation(operationId, "rollback"))
      expect(resolved.tree).toMatchObject({ stagingRemoved: true, treeLeft: false })
      expect(besides(into)).toEqual([])
      expect(okValue(await rewind.recover())).toEqual([])
    } finally {
      await rewind.close()
    }
  })

  it("a crash between the rename and the commit: the tree with no child is reported and left", async () => {
    const { root, rewind, sessionId, reply } = await parent()
    try {
      const into = join(temp(), "tree")
      const before = await sessionsCount(rewind)
      const exit = await run(rewind, crashing(fork(sessionId, reply, into, "cmd-crash"), "commit"))
      expect(Exit.isFailure(exit)).toBe(true)
      expect(snapshot(into)).toEqual(snapshot(root))
      expect(await sessionsCount(rewind)).toBe(before)

      const [op] = okValue(await rewind.recover())
      expect(op!.tree?.state).toEqual({ staging: "missing", root: "occupied" })
      expect(op!.recorded).toBe(false)
      const resolved = okValue(await rewind.resolveOperation(op!.record.intent.operationId, "rollback"))
      expect(resolved.tree).toMatchObject({ stagingRemoved: false, treeLeft: true })
      // Nobody's files are removed on a guess: the tree stays, reported.
      expect(snapshot(into)).toEqual(snapshot(root))
      expect(okValue(await rewind.recover())).toEqual([])
    } finally {
      await rewind.close()
    }
  })

  it("a crash after the commit: the child is recorded, so only continue applies and closes the record", async () => {
    const { root, rewind, sessionId, reply } = await parent()
    try {
      const into = join(temp(), "tree")
      const exit = await run(rewind, crashing(fork(sessionId, reply, into, "cmd-crash"), "complete"))
      expect(Exit.isSuccess(exit)).toBe(true)
      const [op] = okValue(await rewind.recover())
      expect(op!.recorded).toBe(true)
      const operationId = op!.record.intent.operationId
      const rolled = await rewind.resolveOperation(operationId, "rollback")
      expect(rolled.ok).toBe(false)
      okValue(await rewind.resolveOperation(operationId, "continue"))
      expect(okValue(await rewind.recover())).toEqual([])
      expect(snapshot(into)).toEqual(snapshot(root))
    } finally {
      await rewind.close()
    }
  })
})
