// The Promise facade is derived from the declared Rewind service (issue 22 item 3): it exposes
// every operation of `RewindOperations` (so none can be forgotten) and every one of them answers
// the one shape, `{ ok: true, value }` or `{ ok: false, refusal }`, whatever it is given.
import { describe, expect, it } from "@effect/vitest"
import {
  layerBackgroundTasks,
  MemoryArtifactStore,
  MemoryOperationJournal,
  MemorySessionStore,
  MemoryWorkspace,
} from "@rewind/adapter-memory"
import { IdGenerators, type RewindApi, RewindOperations } from "@rewind/core"
import { Layer, Schema } from "effect"
import { openRewind, type Rewind } from "../src/index.js"

const ROOT = "/home/dev/project"

const open = () =>
  openRewind({
    workspaceRoot: ROOT,
    layer: Layer.mergeAll(
      MemorySessionStore.layer,
      MemoryArtifactStore.layer,
      MemoryWorkspace.layer({ root: ROOT }),
      IdGenerators.layerSequential("d"),
      layerBackgroundTasks,
      MemoryOperationJournal.layer,
    ),
  })

const names = Object.keys(RewindOperations) as Array<keyof RewindApi>

/** The one answer shape, checked strictly: exactly `ok` and `value`, or `ok` and a refusal. */
const isAnswer = (answer: unknown): boolean => {
  if (typeof answer !== "object" || answer === null) return false
  const keys = Object.keys(answer).sort().join(",")
  const a = answer as { ok?: unknown; refusal?: { kind?: unknown; message?: unknown } }
  if (a.ok === true) return keys === "ok,value"
  return (
    a.ok === false &&
    keys === "ok,refusal" &&
    typeof a.refusal?.kind === "string" &&
    typeof a.refusal.message === "string"
  )
}

describe("the facade derived from RewindOperations", () => {
  it("exposes every operation of the service, and nothing the table does not declare but its lifecycle", async () => {
    const rewind = await open()
    for (const name of names)
      expect(typeof (rewind as unknown as Record<string, unknown>)[name], name).toBe("function")
    const own = Object.keys(rewind).filter(
      (k) => !["workspaceRoot", "dir", "outcome", "run", "close"].includes(k),
    )
    expect(own.sort()).toEqual([...names].sort())
    await rewind.close()
  })

  it.each(names)("%s answers the one shape, for arguments it refuses and for a real call", async (name) => {
    const rewind = await open()
    const call = (rewind as unknown as Record<string, (...a: ReadonlyArray<unknown>) => Promise<unknown>>)[
      name
    ]!
    const spec = RewindOperations[name]
    // Arguments its Schemas refuse: a symbol where every argument belongs.
    const bad = spec.args.length === 0 ? [Symbol("x")] : spec.args.map(() => Symbol("x"))
    const refused = await call(...bad)
    expect(isAnswer(refused), JSON.stringify(refused)).toBe(true)
    if (spec.args.length > 0) expect(refused).toMatchObject({ ok: false, refusal: { kind: "invalid_input" } })
    // Well-typed arguments on an empty store: a value or a refusal, never a rejection.
    const session = await rewind.createSession({ title: "derived", cwd: ROOT })
    if (!session.ok) throw new Error(session.refusal.message)
    const plain: Record<string, unknown> = {
      sessionId: session.value.id,
      messageId: "msg_none",
      turnId: "turn_none",
      checkpointId: "ckpt_none",
      pointId: "pt_none",
      operationId: "op_none",
      taskId: "task_none",
      token: "tok",
      scope: "both",
      resolution: "rollback",
      outcome: "completed",
      description: "a task",
      target: { sessionId: session.value.id, turnId: "turn_none" },
    }
    const args = spec.args.map((a) => (a.name in plain ? plain[a.name] : undefined))
    const answered = await call(...args)
    expect(isAnswer(answered), JSON.stringify(answered)).toBe(true)
    // A value answered is one its success Schema accepts.
    const a = answered as { ok: boolean; value?: unknown }
    if (a.ok) expect(Schema.is(spec.success)(a.value)).toBe(true)
    await rewind.close()
  })

  it("call options come last: trailing, or in the operation's own options object", async () => {
    const rewind: Rewind = await open()
    const signal = new AbortController().signal
    expect((await rewind.listSessions({ signal })).ok).toBe(true)
    expect((await rewind.snapshotStatus({ signal })).ok).toBe(true)
    expect((await rewind.cleanup({ graceMs: 0, signal })).ok).toBe(true)
    const untyped = rewind as unknown as Record<string, (...a: ReadonlyArray<unknown>) => Promise<unknown>>
    // A bad signal is read where the options are: one more argument, or inside the options object.
    expect(await untyped.listSessions!({ signal: "stop" })).toMatchObject({
      ok: false,
      refusal: { kind: "invalid_input", message: expect.stringMatching(/listSessions: options\.signal/) },
    })
    expect(await untyped.cleanup!({ signal: "stop" })).toMatchObject({
      ok: false,
      refusal: { kind: "invalid_input", message: expect.stringMatching(/cleanup: options\.signal/) },
    })
    // One argument too many is refused, naming the arguments the operation takes.
    expect(await untyped.listSessions!({}, "extra")).toMatchObject({
      ok: false,
      refusal: {
        kind: "invalid_input",
        message: expect.stringMatching(/takes at most 1 argument\(s\) \(options\)/),
      },
    })
    await rewind.close()
  })
})
