// The facade's door (issue 21 items 12 and 13): wrong-typed or nonsense input answers
// invalid_input naming the field, in each method's own answer shape; nothing is defaulted
// silently; host paths are normalised, never trimmed; calls after close() reject with RewindClosed.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterEach, describe, expect, it } from "@effect/vitest"
import {
  layerBackgroundTasks,
  MemoryArtifactStore,
  MemoryOperationJournal,
  MemorySessionStore,
  MemoryWorkspace,
} from "@rewind/adapter-memory"
import { VersionConflict } from "@rewind/contracts"
import { IdGenerators, SessionStore } from "@rewind/core"
import { Effect, Layer } from "effect"
import { openRewind, type Rewind, RewindClosed } from "../src/index.js"
import { okValue } from "./okValue.js"

const temps: Array<string> = []
afterEach(() => {
  for (const dir of temps.splice(0)) rmSync(dir, { recursive: true, force: true })
})

/** A workspace with one session and one running turn; the test closes nothing but its own instance. */
const open = async () => {
  const root = mkdtempSync(join(tmpdir(), "rewind-door-"))
  temps.push(root)
  const rewind = await openRewind({ workspaceRoot: root, durability: "atomic" })
  const session = await rewind.createSession({ title: "door", cwd: root })
  if (!session.ok) throw new Error(session.refusal.message)
  const turn = await rewind.appendUserMessage(session.value.id, { text: "write a.txt" })
  if (!turn.ok) throw new Error(turn.refusal.message)
  return { root, rewind, sessionId: session.value.id, ...turn.value }
}

// Plain JavaScript hosts can pass anything; the types are bypassed on purpose.
// biome-ignore lint/suspicious/noExplicitAny: calling the facade as untyped JavaScript does
const untyped = (rewind: Rewind): any => rewind

const expectInvalid = (
  answer: { ok: boolean; refusal?: { kind: string; message: string } },
  field: string | RegExp,
) => {
  expect(answer.ok).toBe(false)
  expect(answer.refusal?.kind).toBe("invalid_input")
  expect(answer.refusal?.message).toMatch(field)
}

describe("facade input validation (issue 21 item 12)", () => {
  it("wrong types answer invalid_input naming the field, never a raw TypeError", async () => {
    const { rewind, sessionId, turnId } = await open()
    const r = untyped(rewind)
    expectInvalid(await r.createSession(null), /createSession: input/)
    expectInvalid(await r.appendUserMessage(Symbol("ses"), { text: "x" }), /appendUserMessage: sessionId/)
    expectInvalid(await r.appendUserMessage(sessionId, { text: 42 }), /input\.text/)
    expectInvalid(await r.appendUserMessage(sessionId, null), /appendUserMessage: input/)
    expectInvalid(await r.appendReply(sessionId, { turnId, role: "root", parts: [] }), /input\.role/)
    expectInvalid(
      await r.appendReply(sessionId, { turnId, parts: [{ kind: "text", text: "x", data: 10n }] }),
      /input\.parts\[0\]\.data/,
    )
    expectInvalid(await r.transcript(sessionId, { signal: "stop" }), /options\.signal/)
    expectInvalid(await r.rewindConversation(sessionId, { id: 1 }), /rewindConversation: messageId/)
    expectInvalid(await r.previewFileRewind(null), /previewFileRewind: target/)
    expectInvalid(await r.applyFileRewind(undefined), /applyFileRewind: preview/)
    expectInvalid(await r.forkFromCheckpoint(sessionId, { latest: "yes" }), /forkFromCheckpoint: target/)
    expectInvalid(await r.resolveOperation("op_1", "undo"), /resolveOperation: resolution/)
    // A history window: 1 to 1,000 entries, no other key.
    expectInvalid(await r.sessionHistory(sessionId, { limit: -1 }), /sessionHistory: window\.limit/)
    expectInvalid(await r.sessionHistory(sessionId, { limit: 0 }), /sessionHistory: window\.limit/)
    expectInvalid(await r.sessionHistory(sessionId, { limit: 1001 }), /at most 1000 entries/)
    expectInvalid(await r.sessionHistory(sessionId, { limit: 5, from: 2 }), /sessionHistory: window/)
    expect((await r.sessionHistory(sessionId, { offset: 0, limit: 1000 })).ok).toBe(true)
    // Nothing was appended by any of them.
    const transcript = await rewind.transcript(sessionId)
    expect(transcript.ok && transcript.value.length).toBe(1)
    // One answer shape (issue 22): a method that used to reject its refusals answers them too.
    expectInvalid(await r.listSessions({ signal: 1 }), /listSessions: options\.signal/)
    await rewind.close()
  })

  it("recordFileMutation(null) answers invalid_input in the one answer shape (it never rejects)", async () => {
    const { rewind } = await open()
    const r = untyped(rewind)
    for (const input of [null, undefined, 42, "a.txt", { path: Symbol("p") }]) {
      expectInvalid(await r.recordFileMutation(input), /recordFileMutation: input/)
    }
    await rewind.close()
  })

  it("calls after close() reject with a typed RewindClosed, not 'ManagedRuntime disposed'", async () => {
    const { rewind, sessionId } = await open()
    await rewind.close()
    await rewind.close() // idempotent
    const error = await rewind.transcript(sessionId).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(RewindClosed)
    expect((error as RewindClosed).message).toMatch(/transcript: this Rewind was closed/)
    await expect(rewind.listSessions()).rejects.toBeInstanceOf(RewindClosed)
    await expect(rewind.recordFileMutation(null as never)).rejects.toBeInstanceOf(RewindClosed)
  })
})

describe("nonsense is refused, nothing is defaulted silently (issue 21 item 13)", () => {
  it("capture settings out of range and declaredPaths as a string capture nothing", async () => {
    const { root, rewind, sessionId, turnId } = await open()
    writeFileSync(join(root, "a.txt"), "a")
    const bad: ReadonlyArray<readonly [Record<string, unknown>, RegExp]> = [
      [{ settings: { maxFileBytes: -1 } }, /options\.settings\.maxFileBytes/],
      [{ settings: { maxFiles: Number.NaN } }, /options\.settings\.maxFiles/],
      [{ settings: { timeBudgetMs: -1 } }, /options\.settings\.timeBudgetMs/],
      [{ settings: { maxFileByte: 10 } }, /options\.settings\.maxFileByte/],
      [{ settings: { maxFiles: undefined } }, /options\.settings\.maxFiles/],
      [{ declaredPaths: "a.txt" }, /options\.declaredPaths/],
      [{ declaredPaths: ["../etc/passwd"] }, /options\.declaredPaths\[0\]/],
      [{ onProgress: "bar" }, /options\.onProgress/],
    ]
    for (const [options, field] of bad) {
      expectInvalid(await untyped(rewind).capturePoint(sessionId, turnId, options), field)
    }
    const points = await rewind.listPoints(sessionId)
    expect(points.ok && points.value).toEqual([])
    // The same call with sane settings captures.
    const good = okValue(
      await rewind.capturePoint(sessionId, turnId, {
        settings: { maxFiles: 10 },
        declaredPaths: ["./a.txt"],
      }),
    )
    expect(good._tag).toBe("Captured")
    await rewind.close()
  })

  it("afterMode 0o777777 and evaluateRewindTarget scope 42 are refused", async () => {
    const { rewind, sessionId, turnId, messageId } = await open()
    const mode = await rewind.recordFileMutation({
      sessionId,
      turnId,
      path: "a.txt",
      toolName: "write",
      before: null,
      after: "a",
      afterMode: 0o777777,
    })
    expectInvalid(mode, /input\.afterMode/)
    expectInvalid(await untyped(rewind).evaluateRewindTarget(sessionId, messageId, 42), /scope/)
    const changes = await rewind.turnFileChanges(sessionId)
    expect(changes.ok && (changes.value?.files.length ?? 0)).toBe(0)
    await rewind.close()
  })

  it("a host path is normalised ('./a.txt', 'a//b'); '..', absolute paths and NUL stay refused", async () => {
    const { rewind, sessionId, turnId } = await open()
    const record = (path: string, after: string) =>
      rewind
        .recordFileMutation({ sessionId, turnId, path, toolName: "write", before: null, after })
        .then((answer) => (answer.ok ? answer.value : { recorded: false as const, refusal: answer.refusal }))
    const dotted = await record("./a.txt", "a")
    expect(dotted.recorded && dotted.checkpoint.path).toBe("a.txt")
    const doubled = await record("d//b.txt", "b")
    expect(doubled.recorded && doubled.checkpoint.path).toBe("d/b.txt")
    const spaced = await record(" lead.txt", "c")
    expect(spaced.recorded && spaced.checkpoint.path).toBe(" lead.txt")
    for (const path of ["../a.txt", "/etc/passwd", "a\u0000b", ""]) {
      expect(await record(path, "x"), path).toMatchObject({
        recorded: false,
        refusal: { kind: "invalid_input" },
      })
    }
    await rewind.close()
  })
})

describe("a version conflict is never a raw rejection (issue 21 item 14)", () => {
  it("a session that keeps moving under a command answers a conflict refusal after bounded retries", async () => {
    let appends = 0
    // Every append loses the race, as if another writer always committed first.
    const losing = Layer.effect(
      SessionStore,
      Effect.map(SessionStore, (inner) => ({
        ...inner,
        append: (request: Parameters<typeof inner.append>[0]) =>
          request.expectedVersion === 0
            ? inner.append(request)
            : Effect.suspend(() => {
                appends++
                return Effect.fail(
                  new VersionConflict({
                    sessionId: request.sessionId,
                    expectedVersion: request.expectedVersion,
                    actualVersion: request.expectedVersion + 1,
                  }),
                )
              }),
      })),
    ).pipe(Layer.provideMerge(MemorySessionStore.layer))
    const layer = Layer.mergeAll(
      losing,
      MemoryArtifactStore.layer,
      MemoryWorkspace.layer(),
      IdGenerators.layerSequential("c"),
      layerBackgroundTasks,
      MemoryOperationJournal.layer,
    )
    const rewind = await openRewind({ workspaceRoot: "/workspace", layer })
    const session = await rewind.createSession({ title: "busy", cwd: "/workspace" })
    if (!session.ok) throw new Error(session.refusal.message)
    const answer = await rewind.appendUserMessage(session.value.id, { text: "hello" })
    expect(answer).toMatchObject({ ok: false, refusal: { kind: "conflict" } })
    expect(answer.ok === false && answer.refusal.message).toMatch(/another writer kept changing session/)
    // Re-read and re-decided under the engine's bounded schedule, then answered.
    expect(appends).toBe(14)
    await rewind.close()
  })
})
