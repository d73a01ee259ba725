/**
 * The generic JSON-RPC server on a table of test operations: params by name and by position
 * decoded with the operation's Schemas, results encoded with its success Schema, refusals as
 * results, typed errors with their tag, every standard error code, an over-long line, a flood
 * under backpressure, per-session order, cancellation and progress.
 */
import { describe, expect, it } from "@effect/vitest"
import { RewindOperations } from "@rewind/core"
import { Deferred, Effect, Schema } from "effect"
import { makeLineSplitter } from "../../src/server/lineSplitter.js"
import { makeRpcServer, openRpcDocument, type ServedOperation } from "../../src/server/rpcServer.js"
import { connect, request } from "./rpcHarness.js"

class StoreBroke extends Schema.TaggedError<StoreBroke>()("StoreBroke", { message: Schema.String }) {}

const Options = Schema.UndefinedOr(Schema.Struct({ loud: Schema.optional(Schema.Boolean) }))

const ops = {
  stamp: {
    name: "stamp",
    summary: "Answers the session and n, with a date (encoded as millis).",
    access: "write",
    session: "sessionId",
    args: [
      { name: "sessionId", schema: Schema.String },
      { name: "input", schema: Schema.Struct({ n: Schema.Number.pipe(Schema.int()) }) },
      { name: "options", schema: Options, optional: true },
    ],
    success: Schema.Struct({ sessionId: Schema.String, n: Schema.Number, at: Schema.DateFromNumber }),
  },
  refuse: { name: "refuse", summary: "Refuses.", access: "read", args: [], success: Schema.Unknown },
  broken: {
    name: "broken",
    summary: "Fails with a typed error.",
    access: "read",
    args: [],
    success: Schema.Unknown,
  },
  defect: { name: "defect", summary: "Dies.", access: "read", args: [], success: Schema.Unknown },
  hold: {
    name: "hold",
    summary: "Waits for the test to release it.",
    access: "write",
    session: "sessionId",
    args: [
      { name: "sessionId", schema: Schema.String },
      { name: "tag", schema: Schema.String },
    ],
    success: Schema.String,
  },
  capture: {
    name: "capture",
    summary: "Reports progress, then answers.",
    access: "write",
    progress: true,
    args: [{ name: "options", schema: Schema.UndefinedOr(Schema.Struct({})), optional: true }],
    success: Schema.Number,
  },
} satisfies Record<string, ServedOperation>

/** A fresh implementation with gates the test opens, and a log of what ran. */
const makeImpl = () => {
  const log: Array<string> = []
  const gates = new Map<string, Deferred.Deferred<void>>()
  const gate = (tag: string) => {
    let g = gates.get(tag)
    if (g === undefined) {
      g = Effect.runSync(Deferred.make<void>())
      gates.set(tag, g)
    }
    return g
  }
  const open = (tag: string) => Effect.runSync(Deferred.succeed(gate(tag), undefined))
  let running = 0
  let most = 0
  const impl = {
    stamp: (sessionId: string, input: { n: number }) =>
      Effect.succeed({ ok: true, value: { sessionId, n: input.n, at: new Date(1234) } }),
    refuse: () => Effect.succeed({ ok: false, refusal: { kind: "busy", message: "try later" } }),
    broken: () => Effect.fail(new StoreBroke({ message: "disk on fire" })),
    defect: () => Effect.die(new Error("bug")),
    hold: (sessionId: string, tag: string) =>
      Effect.gen(function* () {
        running++
        most = Math.max(most, running)
        log.push(`start ${sessionId} ${tag}`)
        yield* Deferred.await(gate(tag))
        log.push(`end ${sessionId} ${tag}`)
        return { ok: true, value: tag }
      }).pipe(
        Effect.onInterrupt(() => Effect.sync(() => log.push(`interrupted ${tag}`))),
        Effect.ensuring(Effect.sync(() => running--)),
      ),
    capture: (options: { onProgress: (p: unknown) => void }) =>
      Effect.sync(() => {
        options.onProgress({ phase: "scan", scanned: 1 })
        options.onProgress({ phase: "hash", hashed: 1 })
        options.onProgress({ phase: "done", hashed: 2 })
        return { ok: true, value: 2 }
      }),
  }
  return { impl, log, open, most: () => most }
}

const server = (options?: Parameters<typeof makeRpcServer>[2]) => {
  const fake = makeImpl()
  return { ...fake, rpc: makeRpcServer(ops, fake.impl, options) }
}

describe("rewind serve: the generic JSON-RPC server", () => {
  it.effect(
    "takes params by name or by position, decodes them and encodes the value with the success Schema",
    () =>
      Effect.promise(async () => {
        const { rpc } = server()
        const c = connect(rpc)
        c.send(request(1, "stamp", { sessionId: "s1", input: { n: 3 } }))
        c.send(request(2, "stamp", ["s2", { n: 4 }]))
        c.send(request("three", "stamp", ["s3", { n: 5 }, null]))
        expect((await c.answer(1)).result).toEqual({ ok: true, value: { sessionId: "s1", n: 3, at: 1234 } })
        expect((await c.answer(2)).result).toEqual({ ok: true, value: { sessionId: "s2", n: 4, at: 1234 } })
        expect((await c.answer("three")).result).toEqual({
          ok: true,
          value: { sessionId: "s3", n: 5, at: 1234 },
        })
        await c.end()
      }),
  )

  it.effect(
    "answers refusals as results, typed errors with their tag in data, defects as internal errors",
    () =>
      Effect.promise(async () => {
        const { rpc } = server()
        const c = connect(rpc)
        c.send(request(1, "refuse"))
        c.send(request(2, "broken"))
        c.send(request(3, "defect"))
        expect((await c.answer(1)).result).toEqual({
          ok: false,
          refusal: { kind: "busy", message: "try later" },
        })
        const broken = await c.answer(2)
        expect(broken.error?.code).toBe(-32000)
        expect(broken.error?.data).toEqual({ tag: "StoreBroke", message: "disk on fire" })
        const defect = await c.answer(3)
        expect(defect.error?.code).toBe(-32603)
        expect(defect.error?.message).toContain("bug")
        await c.end()
      }),
  )

  it.effect("bad input: each line gets its standard error and the connection goes on", () =>
    Effect.promise(async () => {
      const { rpc } = server()
      const c = connect(rpc)
      c.send("{not json")
      c.send("[1,2]")
      c.send('"a string"')
      c.send({ jsonrpc: "1.0", id: 10, method: "stamp" })
      c.send({ jsonrpc: "2.0", id: 11, method: 42 })
      c.send({ jsonrpc: "2.0", id: { no: 1 }, method: "refuse" })
      c.send({ jsonrpc: "2.0", id: 12, method: "refuse", params: "x" })
      c.send(request(13, "nope"))
      c.send(request(14, "stamp", { sessionId: "s", input: { n: 1.5 } }))
      c.send(request(15, "stamp", { sessionId: "s" }))
      c.send(request(16, "stamp", { sessionId: "s", input: { n: 1 }, extra: true }))
      c.send(request(17, "stamp", ["s", { n: 1 }, undefined, "too many"]))
      c.send(request(18, "stamp", [7, { n: 1 }]))
      c.send(request(19, "refuse"))
      await c.answer(19)
      const codes = c.messages.map((m) => [m.id, m.error?.code ?? "ok"])
      expect(codes).toEqual([
        [null, -32700],
        [null, -32600],
        [null, -32600],
        [10, -32600],
        [11, -32600],
        [null, -32600],
        [12, -32600],
        [13, -32601],
        [14, -32602],
        [15, -32602],
        [16, -32602],
        [17, -32602],
        [18, -32602],
        [19, "ok"],
      ])
      const wrongType = c.messages.find((m) => m.id === 14)!
      expect(wrongType.error?.message).toContain("input.n")
      expect(wrongType.error?.data).toEqual({ param: "input", field: "input.n" })
      expect(c.messages.find((m) => m.id === 15)!.error?.message).toContain("input: is missing")
      await c.end()
    }),
  )

  it.effect("a line over the limit is answered without being kept, and the next line is served", () =>
    Effect.promise(async () => {
      const { rpc } = server({ maxLineBytes: 4096 })
      const c = connect(rpc)
      const chunk = Buffer.alloc(1024 * 1024, 0x61)
      c.raw('{"jsonrpc":"2.0","id":1,"method":"refuse","params":{"x":"')
      for (let i = 0; i < 100; i++) c.raw(chunk)
      c.raw('"}}\n')
      c.send(request(2, "refuse"))
      await c.answer(2)
      expect(c.messages[0]!.id).toBe(null)
      expect(c.messages[0]!.error?.code).toBe(-32600)
      expect(c.messages[0]!.error?.data).toEqual({ tag: "LineTooLong", limitBytes: 4096 })
      expect(c.messages).toHaveLength(2)
      await c.end()
    }),
  )

  it.effect("a flood of 10,000 requests is answered in full with at most maxInFlight calls at once", () =>
    Effect.promise(async () => {
      const { rpc, open, most } = server({ maxInFlight: 8 })
      const c = connect(rpc)
      open("x")
      const lines: Array<string> = []
      for (let i = 0; i < 10_000; i++) lines.push(JSON.stringify(request(i, "hold", [`s${i % 50}`, "x"])))
      c.raw(`${lines.join("\n")}\n`)
      await c.until(() => c.messages.length === 10_000)
      expect(c.messages.every((m) => (m.result as { ok: boolean }).ok)).toBe(true)
      expect(new Set(c.messages.map((m) => m.id)).size).toBe(10_000)
      expect(most()).toBeLessThanOrEqual(8)
      await c.end()
    }),
  )

  it.effect("calls on one session run one at a time in arrival order; other sessions run meanwhile", () =>
    Effect.promise(async () => {
      const { rpc, open, log } = server()
      const a = connect(rpc)
      const b = connect(rpc)
      a.send(request(1, "hold", ["s1", "first"]))
      b.send(request(2, "hold", ["s1", "second"]))
      a.send(request(3, "hold", ["s2", "other"]))
      // s2 runs while s1's first call is still held: sessions are concurrent.
      open("other")
      await a.answer(3)
      expect(log).toContain("start s1 first")
      expect(log).not.toContain("start s1 second")
      open("second")
      open("first")
      await b.answer(2)
      expect(log.filter((l) => l.includes("s1"))).toEqual([
        "start s1 first",
        "end s1 first",
        "start s1 second",
        "end s1 second",
      ])
      await a.end()
      await b.end()
    }),
  )

  it.effect("$/cancelRequest interrupts the call's fiber; it answers -32800 and the session moves on", () =>
    Effect.promise(async () => {
      const { rpc, open, log } = server()
      const c = connect(rpc)
      c.send(request(1, "hold", ["s1", "never"]))
      c.send(request(2, "hold", ["s1", "next"]))
      await c.until(() => log.includes("start s1 never"))
      c.send({ jsonrpc: "2.0", method: "$/cancelRequest", params: { id: 1 } })
      const cancelled = await c.answer(1)
      expect(cancelled.error?.code).toBe(-32800)
      expect(log).toContain("interrupted never")
      open("next")
      expect((await c.answer(2)).result).toEqual({ ok: true, value: "next" })
      await c.end()
    }),
  )

  it.effect("progress notifications carry the request id; the phase changes are all sent", () =>
    Effect.promise(async () => {
      const { rpc } = server()
      const c = connect(rpc)
      c.send(request("cap", "capture"))
      expect((await c.answer("cap")).result).toEqual({ ok: true, value: 2 })
      const progress = c.messages.filter((m) => m.method === "$/progress")
      expect(progress.map((m) => m.params)).toEqual([
        { id: "cap", progress: { phase: "scan", scanned: 1 } },
        { id: "cap", progress: { phase: "hash", hashed: 1 } },
        { id: "cap", progress: { phase: "done", hashed: 2 } },
      ])
      await c.end()
    }),
  )

  it.effect("end of input waits for the calls in flight to answer", () =>
    Effect.promise(async () => {
      const { rpc, open } = server()
      const c = connect(rpc)
      c.send(request(1, "hold", ["s1", "late"]))
      const ended = c.end()
      open("late")
      await ended
      expect(c.messages.find((m) => m.id === 1)?.result).toEqual({ ok: true, value: "late" })
    }),
  )

  it("the OpenRPC document names every method with its params' JSON Schemas", () => {
    const doc = openRpcDocument(ops, "0.0.0")
    expect(doc.methods.map((m) => m.name)).toEqual(Object.keys(ops))
    const stamp = doc.methods[0]!
    expect(stamp.params.map((p) => [p.name, p.required])).toEqual([
      ["sessionId", true],
      ["input", true],
      ["options", false],
    ])
    expect(stamp.params[1]!.schema).toMatchObject({
      type: "object",
      required: ["n"],
      properties: { n: { type: "integer" } },
    })
    expect(stamp["x-session"]).toBe("sessionId")
    expect(JSON.stringify(stamp.result.schema)).toContain('"at":{"type":"number"')
  })

  it("the document of the declared service leaves out no argument a JSON host can send", () => {
    // A property the generator could not express used to be pruned silently: appendReply's
    // `parts` (its `data` is any JSON) vanished, and the Python client generated from the
    // document could not send a reply's parts.
    const doc = openRpcDocument(RewindOperations, "0.0.0")
    const reply = doc.methods.find((m) => m.name === "appendReply")!
    expect(reply.params[1]!.schema).toMatchObject({
      required: expect.arrayContaining(["turnId", "parts"]),
      properties: { parts: { type: "array" } },
    })
    expect(JSON.stringify(doc)).not.toContain("not expressible")
  })
})

describe("rewind serve: the line splitter", () => {
  it("keeps a multi-byte character split across chunks and drops a CR before the newline", () => {
    const bytes = Buffer.from('{"t":"é€"}\r\n', "utf8")
    const s = makeLineSplitter(100)
    const events = [
      ...s.push(bytes.subarray(0, 7)),
      ...s.push(bytes.subarray(7, 9)),
      ...s.push(bytes.subarray(9)),
    ]
    expect(events).toEqual([{ _tag: "line", text: '{"t":"é€"}' }])
  })

  it("reports an over-long line once with its size, then carries on, and hands a last unterminated line at end", () => {
    const s = makeLineSplitter(10)
    const events = [
      ...s.push(Buffer.from("0123456789abc")),
      ...s.push(Buffer.from("def\nok\nlast")),
      ...s.end(),
    ]
    expect(events).toEqual([
      { _tag: "oversize", bytes: 16 },
      { _tag: "line", text: "ok" },
      { _tag: "line", text: "last" },
    ])
  })
})
