// Fuzzing of the pure entry points (10,000 cases each by default): the event codec fed random JSON
// and mutated real payloads, id and workspace-path parsing, the slash-command parser, and
// root-confined path resolution over random trees of files, directories and symlinks. Each case must
// end in a value or a typed error (never a throw of anything else), and confinement must never
// probe, nor resolve to, anything outside the root.
import { describe, expect, it } from "@effect/vitest"
import {
  CheckpointId,
  ContentHash,
  decodeEventSync,
  EVENT_VERSIONS,
  EventDecodeError,
  encodeEvent,
  ID_PATTERN,
  PathRefused,
  SessionId,
  WorkspacePath,
  workspacePathProblem,
} from "@rewind/contracts"
import { type ProbedEntry, resolveConfined } from "@rewind/core"
import { arbSessionEvent } from "@rewind/testkit"
import { Cause, Effect, Either, Exit, FastCheck as fc, Option, Schema } from "effect"
import { parseSlashCommand, SlashCommandError } from "../src/index.js"
import { fuzzParameters, fuzzTally } from "./storeFixture.js"

const CASES = 10_000

/** Strings that stress parsers: unicode, lone surrogates, NUL and controls, separators, long runs. */
const hostileString = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.string({ unit: "binary", maxLength: 40 }),
  fc.string({
    unit: fc.constantFrom("a", "/", ".", "..", "\\", "\u0000", "\ud800", "\udfff", " ", ":", "~"),
    maxLength: 30,
  }),
  fc.constantFrom("", ".", "..", "/", "//", "C:\\x", "\u0000", "a".repeat(5000), "é".repeat(3000)),
)

const eventTypes = Object.keys(EVENT_VERSIONS)

/** Replaces one value somewhere in a JSON tree by another random value. */
const mutate = (value: unknown, path: ReadonlyArray<number>, replacement: unknown): unknown => {
  if (path.length === 0 || value === null || typeof value !== "object") return replacement
  const entries = Array.isArray(value) ? value.map((v, i) => [i, v] as const) : Object.entries(value)
  if (entries.length === 0) return replacement
  const [key, child] = entries[path[0]! % entries.length]!
  const next = mutate(child, path.slice(1), replacement)
  if (Array.isArray(value)) return value.map((v, i) => (i === key ? next : v))
  return { ...(value as object), [key]: next }
}

describe("fuzzing pure entry points", () => {
  it("the event codec decodes random JSON to an event or an EventDecodeError", () => {
    const tally = fuzzTally("event codec")
    const randomWire = fc.record({
      type: fc.oneof(fc.constantFrom(...eventTypes), hostileString),
      version: fc.oneof(fc.constantFrom(1, 2, 0, -1, 1.5, Number.NaN, 2 ** 53), fc.integer()),
      payload: fc.jsonValue({ maxDepth: 4 }),
    })
    const mutatedWire = fc
      .tuple(arbSessionEvent, fc.array(fc.nat(), { maxLength: 6 }), fc.jsonValue({ maxDepth: 2 }))
      .map(([event, path, replacement]) => {
        const wire = encodeEvent(event)
        return { ...wire, payload: mutate(JSON.parse(JSON.stringify(wire.payload)), path, replacement) }
      })
    fc.assert(
      fc.property(
        fc.oneof({ arbitrary: randomWire, weight: 3 }, { arbitrary: mutatedWire, weight: 1 }),
        (wire) => {
          try {
            const event = decodeEventSync(wire as never)
            // Whatever decodes must encode again and carry a known type.
            expect(eventTypes).toContain(event._tag)
            encodeEvent(event)
            tally.count("decoded")
          } catch (error) {
            if (!(error instanceof EventDecodeError)) throw error
            tally.count("EventDecodeError")
          }
        },
      ),
      fuzzParameters("event codec", CASES),
    )
    expect(tally.report().cases).toBeGreaterThanOrEqual(CASES)
  })

  it("ids and content hashes parse or are refused, exactly by their patterns", () => {
    const tally = fuzzTally("ids")
    fc.assert(
      fc.property(
        fc.oneof(hostileString, fc.stringMatching(ID_PATTERN), fc.anything({ maxDepth: 1 })),
        (input) => {
          for (const [schema, pattern] of [
            [SessionId, ID_PATTERN],
            [CheckpointId, ID_PATTERN],
            [ContentHash, /^[0-9a-f]{64}$/],
          ] as const) {
            const result = Schema.decodeUnknownEither(schema as unknown as Schema.Schema<string, string>)(
              input,
            )
            expect(Either.isRight(result)).toBe(typeof input === "string" && pattern.test(input))
            tally.count(Either.isRight(result) ? "accepted" : "refused")
          }
        },
      ),
      fuzzParameters("ids", CASES),
    )
    expect(tally.report().cases).toBeGreaterThanOrEqual(CASES)
  })

  it("a workspace path is accepted only when relative, normalised, without '..', NUL or lone surrogates", () => {
    const tally = fuzzTally("workspace paths")
    fc.assert(
      fc.property(hostileString, (input) => {
        const problem = workspacePathProblem(input)
        const decoded = Schema.decodeUnknownEither(WorkspacePath)(input)
        expect(Either.isRight(decoded)).toBe(problem === undefined)
        if (problem === undefined) {
          expect(input.startsWith("/")).toBe(false)
          expect(input.split("/")).not.toContain("..")
          expect(input.split("/")).not.toContain("")
          expect(input.includes("\u0000")).toBe(false)
          expect(input.isWellFormed()).toBe(true)
        }
        tally.count(problem === undefined ? "accepted" : "refused")
      }),
      fuzzParameters("workspace paths", CASES),
    )
    expect(tally.report().cases).toBeGreaterThanOrEqual(CASES)
  })

  it("the slash-command parser is total: a command or a SlashCommandError", () => {
    const tally = fuzzTally("slash commands")
    const words = fc.constantFrom(
      "/rewind",
      "/fork",
      "/side",
      "/REWIND",
      "code",
      "both",
      "cascade",
      "latest",
      "status",
      "help",
      "conversation",
      "workspace",
      "msg_1",
      "ckpt_2",
    )
    const line = fc.oneof(
      hostileString,
      fc.array(fc.oneof(words, hostileString), { maxLength: 5 }).map((parts) => parts.join(" ")),
    )
    fc.assert(
      fc.property(line, (input) => {
        const parsed = parseSlashCommand(input)
        if (Either.isLeft(parsed)) {
          expect(parsed.left).toBeInstanceOf(SlashCommandError)
          expect(parsed.left.message.length).toBeGreaterThan(0)
          tally.count("SlashCommandError")
        } else tally.count(parsed.right._tag)
      }),
      fuzzParameters("slash commands", CASES),
    )
    expect(tally.report().cases).toBeGreaterThanOrEqual(CASES)
  })

  it("confined resolution never probes or returns a path outside the root, over random symlink trees", () => {
    const tally = fuzzTally("confinement")
    const ROOT = "/w/root"
    const name = fc.constantFrom("a", "b", "c", "root", "w")
    const target = fc.oneof(
      fc
        .array(fc.constantFrom("a", "b", "c", "..", ".", "root", ""), { minLength: 1, maxLength: 5 })
        .map((s) => s.join("/")),
      fc.constantFrom("/", "/w", "/w/root", "/w/root/a", "/w/rootx", "/etc", "/w/root/../x", "../root/a"),
    )
    const entry: fc.Arbitrary<ProbedEntry> = fc.oneof(
      fc.constant({ kind: "file" } as const),
      fc.constant({ kind: "directory" } as const),
      fc.constant({ kind: "other" } as const),
      target.map((t) => ({ kind: "symlink", target: t }) as const),
    )
    const tree = fc.dictionary(
      fc.array(name, { minLength: 1, maxLength: 3 }).map((s) => s.join("/")),
      entry,
      { maxKeys: 12 },
    )
    const path = fc.oneof(
      fc.array(name, { minLength: 1, maxLength: 4 }).map((s) => s.join("/")),
      hostileString,
    )
    fc.assert(
      fc.property(tree, path, fc.boolean(), (entries, input, follow) => {
        const probed: Array<string> = []
        const exit = Effect.runSyncExit(
          resolveConfined(input, {
            root: ROOT,
            finalSymlink: follow ? "refuse" : "report",
            operation: "read",
            probe: (absolute) =>
              Effect.sync((): ProbedEntry => {
                probed.push(absolute)
                return entries[absolute.slice(ROOT.length + 1)] ?? { kind: "missing" }
              }),
            notADirectory: (p, at) => ({ _tag: "NotADirectory" as const, p, at }),
          }),
        )
        for (const p of probed) expect(p.startsWith(`${ROOT}/`)).toBe(true)
        if (Exit.isSuccess(exit)) {
          const out = exit.value.absolute
          expect(out === ROOT || out.startsWith(`${ROOT}/`)).toBe(true)
          expect(out.split("/")).not.toContain("..")
          tally.count(`resolved:${exit.value.kind}`)
        } else {
          const failure = Cause.failureOption(exit.cause)
          expect(Option.isSome(failure)).toBe(true)
          const error = Option.getOrThrow(failure)
          if (error instanceof PathRefused) tally.count(`refused:${error.reason}`)
          else {
            expect(error._tag).toBe("NotADirectory")
            tally.count("not_a_directory")
          }
        }
      }),
      fuzzParameters("confinement", CASES),
    )
    expect(tally.report().cases).toBeGreaterThanOrEqual(CASES)
  })
})
