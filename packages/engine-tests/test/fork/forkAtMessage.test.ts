import { describe, expect, it } from "@effect/vitest"
import { MemorySessionStore } from "@rewind/adapter-memory"
import {
  type CommandId,
  ForkBoundaryPinned,
  type MessageId,
  type RunId,
  type SessionId,
  type TurnCompleted,
} from "@rewind/contracts"
import {
  appendReply,
  appendUserMessage,
  applyCompaction,
  branchView,
  completeTurn,
  completeTurnWithBoundary,
  createSession,
  forkAtMessage,
  loadSession,
  recordExecutionState,
  recordModelSelection,
  recordVerification,
  rewindConversation,
  SessionStore,
  updateGoal,
  validateForkBundle,
} from "@rewind/core"
import { completedTurn, expectRefusal, storedLines } from "@rewind/testkit"
import { Effect, Layer } from "effect"
import { makeForkTestLayer, runFork } from "../support/forkTestLayer.js"

const cmd = (s: string) => s as CommandId
const newSession = createSession({ title: "demo", cwd: "/work" }).pipe(Effect.map((s) => s.id))

const readChild = (id: SessionId) =>
  Effect.gen(function* () {
    const store = yield* SessionStore
    const events = (yield* store.read(id)).map((e) => e.event)
    return { events, state: yield* loadSession(id) }
  })

const partTexts = (state: Effect.Effect.Success<ReturnType<typeof loadSession>>, id: MessageId) =>
  (state.parts.get(id) ?? []).map((p) => `${p.kind}:${p.text ?? ""}`)

describe("completeTurnWithBoundary", () => {
  it.effect("pins the boundary in the same append as TurnCompleted, boundary first", () =>
    runFork(
      Effect.gen(function* () {
        const id = yield* newSession
        const goal = yield* updateGoal(id, { text: "ship it", tokensUsed: 10 })
        const t1 = yield* completedTurn(id, "one")
        yield* recordVerification(id, {
          messageId: t1.last!,
          outcome: "passed",
          summary: "tests",
          goalId: goal.goalId,
        })
        const user = yield* appendUserMessage(id, { text: "two" })
        yield* updateGoal(id, {
          goalId: goal.goalId,
          liveRun: { runId: "run1" as RunId, turnId: user.turnId },
        })
        const tool = yield* appendReply(id, {
          turnId: user.turnId,
          parts: [{ kind: "tool_call", toolName: "Bash" }],
        })
        const final = yield* appendReply(id, { turnId: user.turnId, parts: [{ kind: "text", text: "done" }] })
        const before = (yield* storedLines(id)).length
        const done = yield* completeTurnWithBoundary(id, user.turnId)

        const stream = yield* Effect.flatMap(SessionStore, (s) => s.read(id))
        const tail = stream.slice(before)
        expect(tail.map((e) => e.event._tag)).toEqual(["ForkBoundaryPinned", "TurnCompleted"])
        expect(tail[0]!.at).toBe(tail[1]!.at)
        const pinned = tail[0]!.event as ForkBoundaryPinned
        expect(pinned.messageId).toBe(final.messageId)
        expect(done.boundary).toEqual(pinned.boundary)
        expect(pinned.boundary).toMatchObject({
          turnId: user.turnId,
          historyRoundCount: 2,
          orderedMessageIds: [user.messageId, tool.messageId, final.messageId],
          boundaryMessageId: final.messageId,
        })
        // The goal snapshot leaves the live run behind; the verification before the boundary is named.
        expect(pinned.boundary.goalBoundary?.goals).toEqual([
          { goalId: goal.goalId, text: "ship it", status: "active", tokensUsed: 10 },
        ])
        expect(pinned.boundary.goalBoundary?.verificationIds).toHaveLength(1)
        expect((tail[1]!.event as TurnCompleted).status).toBe("completed")
        const state = yield* loadSession(id)
        expect(state.messages.get(final.messageId)?.anchor).toEqual(pinned.boundary)
      }),
    ),
  )

  it.effect("pins nothing for an aborted turn, a failed reply or a turn without reply", () =>
    runFork(
      Effect.gen(function* () {
        const id = yield* newSession
        const failed = yield* completedTurn(id, "one", { failed: true })
        expect(failed.pinned).toBe(false)
        const u2 = yield* appendUserMessage(id, { text: "two" })
        expect((yield* completeTurnWithBoundary(id, u2.turnId)).noBoundary?.reason).toBe("no_assistant_reply")
        const u3 = yield* appendUserMessage(id, { text: "three" })
        yield* appendReply(id, { turnId: u3.turnId, parts: [{ kind: "text", text: "partial" }] })
        expect((yield* completeTurnWithBoundary(id, u3.turnId, "aborted")).noBoundary?.reason).toBe("aborted")
        const state = yield* loadSession(id)
        expect([...state.messages.values()].filter((m) => m.anchor !== undefined)).toEqual([])
        yield* expectRefusal(completeTurnWithBoundary(id, u3.turnId), "conflict")
      }),
    ),
  )
})

describe("forkAtMessage", () => {
  it.effect("copies the branch up to the boundary into a child built and committed in one go", () =>
    runFork(
      Effect.gen(function* () {
        const id = yield* newSession
        const parent = (yield* loadSession(id)).session!
        const goal = yield* updateGoal(id, { text: "make it fast" })
        const t1 = yield* completedTurn(id, "one", { intermediateReplies: 1 })
        yield* recordModelSelection(id, t1.last!, { provider: "p", model: "small" })
        yield* recordExecutionState(id, t1.last!, { mode: "plan" })
        const u2 = yield* appendUserMessage(id, { text: "two" })
        const r2 = yield* appendReply(id, { turnId: u2.turnId, parts: [{ kind: "text", text: "verified" }] })
        yield* recordVerification(id, {
          messageId: r2.messageId,
          outcome: "passed",
          summary: "ok",
          goalId: goal.goalId,
        })
        yield* completeTurnWithBoundary(id, u2.turnId)
        const t2 = { user: u2.messageId, last: r2.messageId }
        // Recorded after t2's boundary was pinned: a fork at t2 must not see them.
        yield* recordVerification(id, { messageId: t2.last, outcome: "failed", summary: "late" })
        yield* updateGoal(id, { goalId: goal.goalId, status: "done" })
        yield* recordModelSelection(id, t2.last, { provider: "p", model: "large" })
        const t3 = yield* completedTurn(id, "three")
        yield* recordExecutionState(id, t3.last!, { mode: "autonomous" })
        yield* recordModelSelection(id, t3.last!, { provider: "p", model: "newest" })
        const parentBefore = yield* storedLines(id)

        const result = yield* forkAtMessage({ sessionId: id, messageId: t2.last, commandId: cmd("fork-1") })
        expect(result.replayed).toBe(false)
        expect(result.copiedMessageCount).toBe(5)
        expect(yield* storedLines(id)).toEqual(parentBefore)

        const child = yield* readChild(result.childSessionId)
        expect(validateForkBundle(child.events)).toEqual([])
        expect(child.state.session).toMatchObject({
          kind: "fork",
          parentId: id,
          rootTraceId: parent.rootTraceId,
          title: "Fork of demo",
          cwd: "/work",
        })
        expect(child.state.forkedFrom).toMatchObject({
          sourceSessionId: id,
          originMessageId: t2.last,
          forkKind: "message",
        })
        const view = branchView(child.state)
        const copies = view.messageIds.slice(0, 5).map((m) => child.state.messages.get(m)!)
        const sources = [t1.user, ...t1.replies, t2.user, t2.last]
        expect(copies.map((m) => m.forkOrigin?.messageId)).toEqual(sources)
        const parentState = yield* loadSession(id)
        for (const [i, m] of copies.entries()) {
          expect(m.id).not.toBe(sources[i])
          expect(m.sessionId).toBe(result.childSessionId)
          expect(partTexts(child.state, m.id)).toEqual(partTexts(parentState, sources[i]!))
        }
        // The anchor was rewritten to the child's ids, so the child can be forked again.
        const anchor = copies[4]!.anchor!
        expect(anchor.orderedMessageIds).toEqual([copies[3]!.id, copies[4]!.id])
        expect(anchor.boundaryMessageId).toBe(copies[4]!.id)
        // Fork notices: a model-only notice and a UI-only divider, after the copies.
        const [notice, divider] = view.messageIds.slice(5).map((m) => child.state.messages.get(m)!)
        expect(notice).toMatchObject({ role: "system", visibility: "model_only" })
        expect(divider).toMatchObject({ role: "system", visibility: "ui_only" })
        expect(child.state.parts.get(divider!.id)![0]!.kind).toBe("divider")
        expect(view.modelHistory).not.toContain(divider!.id)
        // Turns, goals (as pinned, no live run), only the verification made before the boundary.
        expect([...child.state.turns.values()].map((t) => t.status)).toEqual(["completed", "completed"])
        const goals = [...child.state.goals.values()]
        expect(goals).toHaveLength(1)
        expect(goals[0]).toMatchObject({
          text: "make it fast",
          status: "active",
          forkOrigin: { sessionId: id },
        })
        expect(goals[0]!.goalId).not.toBe(goal.goalId)
        const verifications = [...child.state.verifications.values()]
        expect(verifications.map((v) => [v.summary, v.goalId, v.messageId])).toEqual([
          ["ok", goals[0]!.goalId, copies[4]!.id],
        ])
        // Model selection and execution state as recorded on the last copied reply that had them.
        // (t2's own selection wins over t1's; t3's execution state, the parent's current one, is not copied.)
        expect([...child.state.modelSelections.entries()]).toEqual([
          [copies[4]!.id, { provider: "p", model: "large" }],
        ])
        expect([...child.state.executionStates.entries()]).toEqual([[copies[2]!.id, { mode: "plan" }]])
        expect(child.state.checkpoints).toEqual([])
      }),
    ),
  )

  it.effect("copies compactions inside the prefix with the child's ids", () =>
    runFork(
      Effect.gen(function* () {
        const id = yield* newSession
        const t1 = yield* completedTurn(id, "one")
        yield* completedTurn(id, "two")
        yield* applyCompaction(id, { fromMessageId: t1.user, toMessageId: t1.last!, summaryText: "sum" })
        const t3 = yield* completedTurn(id, "three")
        const result = yield* forkAtMessage({ sessionId: id, messageId: t3.last!, commandId: cmd("f") })
        const child = yield* readChild(result.childSessionId)
        const view = branchView(child.state)
        expect(view.activeCompactions).toHaveLength(1)
        const parentView = branchView(yield* loadSession(id))
        const origin = (m: MessageId) => child.state.messages.get(m)!.forkOrigin?.messageId
        expect(view.modelHistory.slice(0, parentView.modelHistory.length).map(origin)).toEqual(
          parentView.modelHistory,
        )
      }),
    ),
  )

  it.effect("refuses a message without a boundary, a cut message and unknown targets", () =>
    runFork(
      Effect.gen(function* () {
        const id = yield* newSession
        const t1 = yield* completedTurn(id, "one")
        const u2 = yield* appendUserMessage(id, { text: "plain" })
        const r2 = yield* appendReply(id, { turnId: u2.turnId, parts: [{ kind: "text", text: "x" }] })
        yield* completeTurn(id, u2.turnId)
        const fork = (messageId: MessageId, commandId = "c") =>
          forkAtMessage({ sessionId: id, messageId, commandId: cmd(commandId) })
        const noBoundary = yield* expectRefusal(fork(r2.messageId), "fork_boundary_invalid")
        expect(noBoundary.message).toMatch(/no pinned fork boundary/)
        // Completed by `completeTurn`, which pins none: the refusal says which call would have.
        expect(noBoundary.message).toMatch(/was completed without one .*completeTurnWithBoundary/)
        const userMessage = yield* expectRefusal(fork(t1.user), "fork_boundary_invalid")
        expect(userMessage.message).toMatch(/a fork is offered on the final reply of a completed turn/)
        yield* expectRefusal(fork("ghost" as MessageId), "not_found")
        yield* expectRefusal(
          forkAtMessage({ sessionId: "nope" as SessionId, messageId: t1.last!, commandId: cmd("c") }),
          "session_not_found",
        )
        yield* expectRefusal(fork(t1.last!, "bad id!"), "invalid_input")
        yield* rewindConversation({ sessionId: id, messageId: t1.user })
        yield* expectRefusal(fork(t1.last!), "not_on_active_branch")
        expect(yield* Effect.flatMap(SessionStore, (s) => s.listSessions())).toHaveLength(1)
      }),
    ),
  )

  it.effect("refuses a boundary whose run is not contiguous, not a good reply, or miscounts rounds", () =>
    runFork(
      Effect.gen(function* () {
        const store = yield* SessionStore
        const id = yield* newSession
        const t1 = yield* completedTurn(id, "one", { intermediateReplies: 1 })
        const failed = yield* completedTurn(id, "two", { failed: true })
        const t3 = yield* completedTurn(id, "three")
        const good = (yield* loadSession(id)).messages.get(t3.last!)!.anchor!
        // Boundaries as a buggy or hostile host might pin them.
        const pin = (messageId: MessageId, boundary: typeof good) =>
          Effect.gen(function* () {
            const version = yield* store.version(id)
            yield* store.append({
              sessionId: id,
              expectedVersion: version,
              events: [new ForkBoundaryPinned({ messageId, boundary })],
              at: 1,
            })
          })
        yield* pin(failed.last!, {
          ...good,
          orderedMessageIds: [failed.user, failed.last!],
          boundaryMessageId: failed.last!,
        })
        yield* pin(t1.last!, {
          ...good,
          orderedMessageIds: [t1.user, t1.last!],
          boundaryMessageId: t1.last!,
          turnId: t1.turnId,
        })
        const fork = (messageId: MessageId) =>
          forkAtMessage({ sessionId: id, messageId, commandId: cmd("c") })
        const notGood = yield* expectRefusal(fork(failed.last!), "fork_boundary_invalid")
        expect(notGood.message).toMatch(/without error/)
        const gap = yield* expectRefusal(fork(t1.last!), "fork_boundary_invalid")
        expect(gap.message).toMatch(/contiguous/)
        yield* pin(t3.last!, { ...good, historyRoundCount: 7 })
        const rounds = yield* expectRefusal(fork(t3.last!), "fork_boundary_invalid")
        expect(rounds.message).toMatch(/rounds/)
      }),
    ),
  )

  it.effect(
    "replaying the command returns the same child; reusing its id for another request is refused",
    () =>
      runFork(
        Effect.gen(function* () {
          const store = yield* SessionStore
          const id = yield* newSession
          const t1 = yield* completedTurn(id, "one")
          const t2 = yield* completedTurn(id, "two")
          const first = yield* forkAtMessage({ sessionId: id, messageId: t1.last!, commandId: cmd("k") })
          const childLines = yield* storedLines(first.childSessionId)
          const again = yield* forkAtMessage({ sessionId: id, messageId: t1.last!, commandId: cmd("k") })
          expect(again).toEqual({ ...first, replayed: true })
          expect(yield* storedLines(first.childSessionId)).toEqual(childLines)
          expect(yield* store.listSessions()).toHaveLength(2)
          yield* expectRefusal(
            forkAtMessage({ sessionId: id, messageId: t2.last!, commandId: cmd("k") }),
            "conflict",
          )
        }),
      ),
  )

  it.effect("a concurrent run of the same command that commits first is the answer", () =>
    Effect.gen(function* () {
      const data = MemorySessionStore.makeMemoryStoreData()
      const plain = MemorySessionStore.makeMemorySessionStore(data)
      let raced: Effect.Effect<unknown, unknown> | undefined
      // A store whose commit lets a rival run of the same command win just before it writes.
      const racing = Layer.succeed(SessionStore, {
        ...plain,
        commit: (request) =>
          Effect.gen(function* () {
            const rival = raced
            raced = undefined
            if (rival !== undefined) yield* Effect.orDie(rival)
            return yield* plain.commit(request)
          }),
      })
      const layer = Layer.merge(makeForkTestLayer(), racing)
      yield* Effect.gen(function* () {
        const id = yield* newSession
        const t1 = yield* completedTurn(id, "one")
        const input = { sessionId: id, messageId: t1.last!, commandId: cmd("race") }
        let rivalResult: { childSessionId: SessionId } | undefined
        raced = forkAtMessage(input).pipe(
          Effect.tap((r) =>
            Effect.sync(() => {
              rivalResult = r
            }),
          ),
          Effect.provide(Layer.merge(makeForkTestLayer("rival"), MemorySessionStore.layerFrom(data))),
        )
        const mine = yield* forkAtMessage(input)
        expect(mine.replayed).toBe(true)
        expect(mine.childSessionId).toBe(rivalResult!.childSessionId)
        expect(yield* plain.listSessions()).toHaveLength(2)
      }).pipe(Effect.provide(layer))
    }),
  )

  it.effect(
    "forks while the parent runs its next turn; a parent append during the fork does not conflict",
    () =>
      Effect.gen(function* () {
        const data = MemorySessionStore.makeMemoryStoreData()
        const plain = MemorySessionStore.makeMemorySessionStore(data)
        let beforeCommit: Effect.Effect<unknown, unknown> | undefined
        const store = Layer.succeed(SessionStore, {
          ...plain,
          commit: (request) =>
            Effect.gen(function* () {
              const hook = beforeCommit
              beforeCommit = undefined
              if (hook !== undefined) yield* Effect.orDie(hook)
              return yield* plain.commit(request)
            }),
        })
        yield* Effect.gen(function* () {
          const id = yield* newSession
          const t1 = yield* completedTurn(id, "one")
          const running = yield* completedTurn(id, "two", { running: true, intermediateReplies: 1 })
          beforeCommit = appendReply(id, {
            turnId: running.turnId,
            parts: [{ kind: "text", text: "meanwhile" }],
          }).pipe(Effect.provide(Layer.merge(makeForkTestLayer("other"), MemorySessionStore.layerFrom(data))))
          const result = yield* forkAtMessage({ sessionId: id, messageId: t1.last!, commandId: cmd("f") })
          const child = yield* loadSession(result.childSessionId)
          const origins = branchView(child).messageIds.map(
            (m) => child.messages.get(m)!.forkOrigin?.messageId,
          )
          expect(origins.slice(0, 2)).toEqual([t1.user, t1.last])
          expect(origins.slice(2)).toEqual([undefined, undefined])
          const parent = yield* loadSession(id)
          expect(branchView(parent).messageIds).toHaveLength(5)
          expect(parent.turns.get(running.turnId)?.status).toBe("running")
        }).pipe(Effect.provide(Layer.merge(makeForkTestLayer(), store)))
      }),
  )

  it.effect("forks of forks of forks keep working at copied boundaries", () =>
    runFork(
      Effect.gen(function* () {
        const id = yield* newSession
        const t1 = yield* completedTurn(id, "one")
        yield* completedTurn(id, "two")
        const f1 = yield* forkAtMessage({ sessionId: id, messageId: t1.last!, commandId: cmd("a") })
        const c1 = yield* loadSession(f1.childSessionId)
        const copiedBoundary = branchView(c1).messageIds[1]!
        const n1 = yield* completedTurn(f1.childSessionId, "child turn")
        const f2 = yield* forkAtMessage({
          sessionId: f1.childSessionId,
          messageId: n1.last!,
          commandId: cmd("b"),
        })
        const f2b = yield* forkAtMessage({
          sessionId: f1.childSessionId,
          messageId: copiedBoundary,
          commandId: cmd("c"),
        })
        const c2 = yield* loadSession(f2.childSessionId)
        const last = branchView(c2).messageIds.findLast((m) => c2.messages.get(m)!.anchor !== undefined)!
        const f3 = yield* forkAtMessage({
          sessionId: f2.childSessionId,
          messageId: last,
          commandId: cmd("d"),
        })
        const c3 = yield* loadSession(f3.childSessionId)
        expect(c3.session?.title).toBe("Fork of Fork of Fork of demo")
        expect(c3.session?.parentId).toBe(f2.childSessionId)
        // Copies of copies: the previous fork's notices are history now, copied like any message.
        expect(f3.copiedMessageCount).toBe(f2.copiedMessageCount)
        expect((yield* loadSession(f2b.childSessionId)).session?.title).toBe("Fork of Fork of demo")
        for (const child of [f1, f2, f2b, f3]) {
          const events = (yield* Effect.flatMap(SessionStore, (s) => s.read(child.childSessionId))).map(
            (e) => e.event,
          )
          expect(
            validateForkBundle(
              events.slice(0, (yield* loadSession(child.childSessionId)).forkedFrom!.copiedEventCount),
            ),
          ).toEqual([])
        }
      }),
    ),
  )
})
