// Four OS processes, each with its own connection pool (as agent workers on four machines), work
// on one PostgreSQL database at once: they append to one shared stream, fork it through
// multi-stream commits guarded by command facts, fork a common parent with `forkAtMessage`, and run
// and rewind conversations of their own. Afterwards nothing is lost, every stream is gapless,
// every command was recorded exactly once (and everyone got the winner's answer), and every
// worker's in-memory view of its session equals a cold read.
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { expect, it } from "@effect/vitest"
import type { MessageId, SessionEvent, SessionId } from "@rewind/contracts"
import {
  activeBranch,
  BackgroundTasks,
  createSession,
  IdGenerators,
  loadSession,
  SessionStore,
} from "@rewind/core"
import { completedTurn, StoreEvents } from "@rewind/testkit"
import { Effect, Layer, Option } from "effect"
import { PostgresSessionStore } from "../src/index.js"
import { fixture, runNode } from "./childProcess.js"
import { describePg, pgUrl, storeOptions, tempSchema } from "./pgTest.js"

const WORKERS = ["a", "b", "c", "d"] as const
const ROUNDS = 12
const FORKS = 6

interface WorkerReport {
  readonly worker: string
  readonly appended: number
  readonly conflicts: number
  readonly rewinds: number
  readonly rawForks: ReadonlyArray<{ readonly round: number; readonly won: boolean; readonly child: string }>
  readonly messageForks: ReadonlyArray<{
    readonly commandId: string
    readonly child: string
    readonly replayed: boolean
  }>
  readonly own: {
    readonly sessionId: SessionId
    readonly version: number
    readonly branchGeneration: number
    readonly activeMessageIds: ReadonlyArray<MessageId>
    readonly userMessages: ReadonlyArray<MessageId>
  }
}

const tempDir = Effect.acquireRelease(
  Effect.sync(() => fs.mkdtempSync(path.join(os.tmpdir(), "rewind-pg-workers-"))),
  (dir) => Effect.sync(() => fs.rmSync(dir, { recursive: true, force: true })),
)

const idleBackgroundTasks = Layer.succeed(BackgroundTasks, {
  stop: () => Effect.void,
  setGeneration: () => Effect.void,
})

/** The user messages a worker's session keeps active, replayed from what it did (a rewind to the
 * previous turn's question every third round cuts that turn and the current one). */
const expectedActiveUsers = (users: ReadonlyArray<MessageId>): ReadonlyArray<MessageId> => {
  const active: Array<MessageId> = []
  users.forEach((user, i) => {
    active.push(user)
    if (i % 3 === 2) active.splice(active.indexOf(users[i - 1]!))
  })
  return active
}

const textOf = (event: SessionEvent) => (event._tag === "PartAppended" ? (event.part.text ?? "") : "")

describePg("four worker processes on one PostgreSQL database", () => {
  it.scoped(
    `append, fork and rewind in parallel: nothing lost, gapless, facts unique (${WORKERS.length} × ${ROUNDS} rounds)`,
    () =>
      Effect.gen(function* () {
        const schema = yield* tempSchema
        const barrier = yield* tempDir
        const shared = StoreEvents.sessionIdOf("shared")
        const setup = Layer.mergeAll(
          PostgresSessionStore.layer(storeOptions(schema)),
          IdGenerators.layerSequential("setup"),
          idleBackgroundTasks,
        )
        const { parent, boundaries } = yield* Effect.provide(
          Effect.gen(function* () {
            const store = yield* SessionStore
            yield* store.append({
              sessionId: shared,
              expectedVersion: 0,
              events: [StoreEvents.sessionCreated(shared)],
              at: 0,
            })
            const parent = (yield* createSession({
              sessionId: "parent" as SessionId,
              title: "parent",
              cwd: "/work",
            })).id
            const boundaries: Array<MessageId> = []
            for (const text of ["one", "two", "three"])
              boundaries.push((yield* completedTurn(parent, text)).last!)
            return { parent, boundaries }
          }),
          setup,
        )

        const runs = yield* Effect.all(
          WORKERS.map((worker) =>
            runNode(fixture("agentWorker.mjs"), [
              pgUrl,
              schema,
              worker,
              String(ROUNDS),
              String(FORKS),
              barrier,
              shared,
              parent,
              JSON.stringify(boundaries),
              ...WORKERS.filter((w) => w !== worker),
            ]),
          ),
          { concurrency: "unbounded" },
        )
        const reports: Array<WorkerReport> = runs.map((run) => {
          expect(run.stderr).toBe("")
          expect(run.code).toBe(0)
          return JSON.parse(run.stdout) as WorkerReport
        })
        console.log(
          `multi-process (postgres): ${reports.map((r) => `${r.worker}: ${r.conflicts} conflicts retried`).join(", ")}`,
        )

        yield* Effect.provide(
          Effect.gen(function* () {
            const store = yield* SessionStore

            // The shared stream: every worker's appends, once each and in its own order, plus one
            // marker per fork round, numbered 1..N without a gap.
            const events = yield* store.read(shared)
            expect(events.length).toBe(1 + WORKERS.length * ROUNDS + ROUNDS)
            expect(events.every((e, i) => e.sequence === i + 1)).toBe(true)
            const texts = events.slice(1).map((e) => textOf(e.event))
            for (const worker of WORKERS) {
              expect(texts.filter((t) => t.startsWith(`${worker}:`))).toEqual(
                Array.from({ length: ROUNDS }, (_, i) => `${worker}:${i}`),
              )
            }

            // Raw fork bundles: one winner per round, everyone told the same child, the fact, the
            // child stream and the marker all from the winner, no loser's child written.
            for (let round = 0; round < ROUNDS; round++) {
              const entries = reports.map((r) => r.rawForks.find((f) => f.round === round)!)
              const winners = reports.filter((_, i) => entries[i]!.won).map((r) => r.worker)
              expect(winners.length).toBe(1)
              const winner = winners[0]!
              const child = `raw-${winner}-${round}` as SessionId
              expect(new Set(entries.map((e) => e.child))).toEqual(new Set([child]))
              expect(texts.filter((t) => t.startsWith(`fork:${round}:`))).toEqual([`fork:${round}:${winner}`])
              const fact = yield* store.getCommandFact(shared, `raw-fork-${round}`)
              expect(Option.getOrThrow(fact).result).toEqual({ child, worker: winner })
              expect((yield* store.read(child)).map((e) => textOf(e.event))).toEqual([
                "",
                `copied by ${winner}`,
              ])
              for (const worker of WORKERS) {
                if (worker !== winner)
                  expect(yield* store.version(`raw-${worker}-${round}` as SessionId)).toBe(0)
              }
            }

            // forkAtMessage: each command id made one child, and all four workers got that child.
            const sessions = yield* store.listSessions()
            const forkChildren = sessions.filter((s) => s.parentId === parent && s.kind === "fork")
            expect(forkChildren.length).toBe(FORKS)
            for (let k = 0; k < FORKS; k++) {
              const answers = reports.map((r) => r.messageForks.find((f) => f.commandId === `fork-${k}`)!)
              expect(new Set(answers.map((a) => a.child)).size).toBe(1)
              expect(answers.filter((a) => !a.replayed).length).toBe(1)
              const child = answers[0]!.child as SessionId
              expect(forkChildren.map((s) => s.sessionId)).toContain(child)
              const fact = yield* store.getCommandFact(parent, `fork-${k}`)
              expect(Option.getOrThrow(fact).result).toMatchObject({ childSessionId: child })
              expect((yield* loadSession(child)).session?.parentId).toBe(parent)
            }

            // Each worker's own conversation: a cold read equals what the worker held in memory,
            // and the active branch is the one its rewinds leave.
            for (const report of reports) {
              const state = yield* loadSession(report.own.sessionId)
              expect(state.version).toBe(report.own.version)
              expect(state.branchGeneration).toBe(report.rewinds)
              expect(report.rewinds).toBe(Math.floor(ROUNDS / 3))
              expect(activeBranch(state)).toEqual(report.own.activeMessageIds)
              const users = new Set(report.own.userMessages)
              expect(activeBranch(state).filter((id) => users.has(id))).toEqual(
                expectedActiveUsers(report.own.userMessages),
              )
            }

            expect(sessions.length).toBe(2 + WORKERS.length + ROUNDS + FORKS)
            expect(yield* PostgresSessionStore.integrityCheck).toEqual({ ok: true, problems: [] })
          }),
          Layer.mergeAll(PostgresSessionStore.layer(storeOptions(schema)), idleBackgroundTasks),
        )
      }),
    300_000,
  )
})
