import { createHash } from "node:crypto"
import { describe, expect, it } from "@effect/vitest"
import { MemorySessionStore } from "@rewind/adapter-memory"
import { type CommandId, type SessionId, SubagentSpawned } from "@rewind/contracts"
import {
  appendReply,
  appendUserMessage,
  branchView,
  carryLineageOf,
  carrySubagentsAfterRewind,
  completeTurnWithBoundary,
  createSession,
  currentSubagents,
  forkAtMessage,
  isCarryId,
  loadSession,
  rewindConversation,
  SessionStore,
  spawnSubagent,
  validateForkBundle,
} from "@rewind/core"
import { completedTurn, expectRefusal } from "@rewind/testkit"
import { Effect, Layer } from "effect"
import { makeForkTestLayer, runFork } from "../support/forkTestLayer.js"

const cmd = (s: string) => s as CommandId
const sha = (s: string) => createHash("sha256").update(s).digest("hex")
const newSession = createSession({ title: "lead", cwd: "/work" }).pipe(Effect.map((s) => s.id))

const textsOf = (id: SessionId) =>
  Effect.map(loadSession(id), (s) =>
    branchView(s).messageIds.flatMap((m) =>
      (s.parts.get(m) ?? []).flatMap((p) => (p.kind === "text" ? [p.text] : [])),
    ),
  )

/** A parent whose first turn spawns a subagent S (which spawns G); both go on working afterwards. */
const family = Effect.gen(function* () {
  const parent = yield* newSession
  const u1 = yield* appendUserMessage(parent, { text: "delegate" })
  const call = yield* appendReply(parent, {
    turnId: u1.turnId,
    parts: [{ kind: "tool_call", toolName: "Task" }],
  })
  const sub = yield* spawnSubagent({
    parentSessionId: parent,
    turnId: u1.turnId,
    messageId: call.messageId,
    title: "worker",
  })
  const s1 = yield* appendUserMessage(sub.id, { text: "sub task" })
  const grand = yield* spawnSubagent({ parentSessionId: sub.id, turnId: s1.turnId, title: "helper" })
  yield* completedTurn(grand.id, "grand work")
  yield* appendReply(sub.id, { turnId: s1.turnId, parts: [{ kind: "text", text: "sub done" }] })
  yield* completeTurnWithBoundary(sub.id, s1.turnId)
  const final = yield* appendReply(parent, {
    turnId: u1.turnId,
    parts: [{ kind: "text", text: "delegated" }],
  })
  yield* completeTurnWithBoundary(parent, u1.turnId)
  // After the fork point: more work in S and G, and a new descendant of S in its kept turn.
  yield* completedTurn(sub.id, "late sub work")
  yield* completedTurn(grand.id, "late grand work")
  const lateChild = yield* spawnSubagent({ parentSessionId: sub.id, turnId: s1.turnId, title: "late" })
  yield* completedTurn(parent, "next")
  return {
    parent,
    sub: sub.id,
    grand: grand.id,
    lateChild: lateChild.id,
    boundary: final.messageId,
    u1,
    call,
  }
})

describe("subagent carry on fork", () => {
  it.effect(
    "clones the subagents of kept turns under the child, lineage rewritten, cut at the fork point",
    () =>
      runFork(
        Effect.gen(function* () {
          const f = yield* family
          const result = yield* forkAtMessage({
            sessionId: f.parent,
            messageId: f.boundary,
            commandId: cmd("fork"),
          })
          expect(result.warnings).toEqual([])
          expect(result.carried.map((c) => c.originalSessionId)).toEqual([f.sub, f.grand])
          const [subClone, grandClone] = result.carried
          expect(subClone!.parentSessionId).toBe(result.childSessionId)
          expect(grandClone!.parentSessionId).toBe(subClone!.cloneSessionId)
          expect(subClone!.cloneSessionId).toMatch(new RegExp(`^carry-v1\\.${sha(f.sub)}\\.clone_x_\\d+$`))
          expect(isCarryId(subClone!.cloneSessionId)).toBe(true)

          const sClone = yield* loadSession(subClone!.cloneSessionId)
          expect(sClone.session).toMatchObject({
            kind: "subagent",
            parentId: result.childSessionId,
            title: "worker",
          })
          expect(sClone.forkedFrom).toMatchObject({ sourceSessionId: f.sub, forkKind: "subagent_carry" })
          expect(yield* textsOf(subClone!.cloneSessionId)).toEqual(["sub task", "sub done"])
          expect(yield* textsOf(grandClone!.cloneSessionId)).toEqual(["grand work", "re: grand work"])
          // The late descendant was born after the cut: not carried, not linked.
          expect(currentSubagents(sClone).map((l) => l.subagentSessionId)).toEqual([
            grandClone!.cloneSessionId,
          ])

          const child = yield* loadSession(result.childSessionId)
          const link = currentSubagents(child)
          expect(link).toHaveLength(1)
          expect(link[0]).toMatchObject({ subagentSessionId: subClone!.cloneSessionId, carriedFrom: f.sub })
          expect(child.messages.get(link[0]!.messageId!)?.forkOrigin?.messageId).toBe(f.call.messageId)
          expect(child.turns.has(link[0]!.turnId)).toBe(true)

          const store = yield* SessionStore
          const clones = new Set(result.carried.map((c) => c.cloneSessionId))
          for (const s of [result.childSessionId, ...clones]) {
            const events = (yield* store.read(s)).map((e) => e.event)
            expect(validateForkBundle(events, { sessionsInCommit: clones })).toEqual([])
          }
          // The originals are untouched and still belong to the parent.
          expect((yield* loadSession(f.sub)).session?.parentId).toBe(f.parent)
          expect(yield* textsOf(f.sub)).toContain("late sub work")

          // A fork of the fork carries the clones again, recognisably the same lineage.
          const c = yield* loadSession(result.childSessionId)
          const copiedBoundary = branchView(c).messageIds.find(
            (m) => c.messages.get(m)!.anchor !== undefined,
          )!
          const again = yield* forkAtMessage({
            sessionId: result.childSessionId,
            messageId: copiedBoundary,
            commandId: cmd("again"),
          })
          expect(again.carried.map((x) => x.originalSessionId)).toEqual([
            subClone!.cloneSessionId,
            grandClone!.cloneSessionId,
          ])
          expect(again.carried.map((x) => carryLineageOf(x.cloneSessionId))).toEqual([
            sha(f.sub),
            sha(f.grand),
          ])
          expect(new Set([...again.carried.map((x) => x.cloneSessionId), ...clones]).size).toBe(4)
          expect(yield* textsOf(again.carried[0]!.cloneSessionId)).toEqual(["sub task", "sub done"])
        }),
      ),
  )

  it.effect("a subagent that cannot be carried is a warning, not a failure", () =>
    Effect.gen(function* () {
      const data = MemorySessionStore.makeMemoryStoreData()
      yield* Effect.gen(function* () {
        const store = yield* SessionStore
        const parent = yield* newSession
        const u1 = yield* appendUserMessage(parent, { text: "go" })
        const broken = yield* spawnSubagent({ parentSessionId: parent, turnId: u1.turnId, title: "broken" })
        const fine = yield* spawnSubagent({ parentSessionId: parent, turnId: u1.turnId, title: "fine" })
        const stranger = yield* createSession({ title: "someone else", cwd: "/work" })
        // Links a buggy host might leave: to a session that does not exist, and to a main session.
        const version = yield* store.version(parent)
        yield* store.append({
          sessionId: parent,
          expectedVersion: version,
          events: [
            new SubagentSpawned({ subagentSessionId: "ghost" as SessionId, turnId: u1.turnId, spawnedAt: 0 }),
            new SubagentSpawned({ subagentSessionId: stranger.id, turnId: u1.turnId, spawnedAt: 0 }),
          ],
          at: 0,
        })
        // A stored event this build cannot read makes the subagent unreadable.
        data.streams.get(broken.id)!.push({
          sequence: 2,
          at: 0,
          json: JSON.stringify({ type: "FromTheFuture", version: 1, payload: {} }),
        })
        const final = yield* appendReply(parent, { turnId: u1.turnId, parts: [{ kind: "text", text: "ok" }] })
        yield* completeTurnWithBoundary(parent, u1.turnId)
        const result = yield* forkAtMessage({
          sessionId: parent,
          messageId: final.messageId,
          commandId: cmd("f"),
        })
        expect(result.carried.map((c) => c.originalSessionId)).toEqual([fine.id])
        expect(result.warnings.map((w) => [w.sessionId, w.reason])).toEqual([
          [broken.id, "unreadable"],
          ["ghost", "unreadable"],
          [stranger.id, "refused"],
        ])
        expect(result.warnings[0]!.message).toMatch(/FromTheFuture/)
      }).pipe(Effect.provide(Layer.merge(makeForkTestLayer(), MemorySessionStore.layerFrom(data))))
    }),
  )
})

describe("carrySubagentsAfterRewind", () => {
  it.effect("replaces subagents the rewind cut through with clones cut at the rewind point", () =>
    runFork(
      Effect.gen(function* () {
        const parent = yield* newSession
        const u1 = yield* appendUserMessage(parent, { text: "one" })
        const busy = yield* spawnSubagent({ parentSessionId: parent, turnId: u1.turnId, title: "busy" })
        const idle = yield* spawnSubagent({ parentSessionId: parent, turnId: u1.turnId, title: "idle" })
        yield* completedTurn(busy.id, "early")
        yield* completedTurn(idle.id, "all done")
        yield* appendReply(parent, { turnId: u1.turnId, parts: [{ kind: "text", text: "r1" }] })
        yield* completeTurnWithBoundary(parent, u1.turnId)
        const t2 = yield* completedTurn(parent, "two")
        yield* completedTurn(busy.id, "during turn two")
        yield* expectRefusal(
          carrySubagentsAfterRewind({ sessionId: parent, commandId: cmd("early") }),
          "unavailable",
        )

        yield* rewindConversation({ sessionId: parent, messageId: t2.user })
        const result = yield* carrySubagentsAfterRewind({ sessionId: parent, commandId: cmd("carry") })
        expect(result.carried.map((c) => [c.originalSessionId, c.parentSessionId])).toEqual([
          [busy.id, parent],
        ])
        const clone = result.carried[0]!.cloneSessionId
        expect(yield* textsOf(clone)).toEqual(["early", "re: early"])
        const state = yield* loadSession(parent)
        expect(currentSubagents(state).map((l) => l.subagentSessionId)).toEqual([idle.id, clone])
        expect(currentSubagents(state)[1]).toMatchObject({ turnId: u1.turnId, carriedFrom: busy.id })
        const again = yield* carrySubagentsAfterRewind({ sessionId: parent, commandId: cmd("carry") })
        expect(again).toEqual({ ...result, replayed: true })
      }),
    ),
  )
})
