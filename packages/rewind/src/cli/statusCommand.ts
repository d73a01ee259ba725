/**
 * `rewind status`: the store, any operation a crash left incomplete (a restore cut short leaves the
 * workspace half-written, which must not go unsaid), the native module, the hook server and client
 * (and any problems the hooks logged), the snapshot engine's usage and watcher, and the latest
 * turn's file changes. A
 * snapshot status that cannot be read is said and makes the run partial (exit 1), the rest is
 * still printed.
 */
import { Command } from "@effect/cli"
import { RewindResults } from "@rewind/core"
import { Effect, Either, Option, Schema } from "effect"
import type { HookServerStatus } from "../hooks/hookServerStatus.js"
import { nativeStatus } from "../internal/doctor.js"
import { storeLocationOf } from "../layers.js"
import { layoutStatus } from "../storeLayout.js"
import { codeCacheStatus } from "./codeCache.js"
import {
  bytes,
  CliFailure,
  dim,
  ExitCode,
  green,
  iso,
  leftOutLine,
  type Output,
  red,
  table,
  yellow,
} from "./output.js"
import { operationSummary } from "./recoveryCommands.js"
import {
  type CliRewind,
  common,
  expect,
  failOnErrors,
  resolveSession,
  sessionOption,
  withRewind,
} from "./store.js"

/**
 * The workspace's hook server (the socket the hook client reaches, whether it answers, its pid
 * and idle exit), then what agent hooks could not do (kept by `rewind hook`, which never fails
 * the agent): the problems only when there are any.
 */
const reportHookProblems = (rewind: CliRewind, out: Output) =>
  Effect.gen(function* () {
    if (rewind.dir === undefined) return undefined
    const { hookServerStatus } = yield* Effect.promise(() => import("../hooks/hookServerStatus.js"))
    const server = yield* Effect.promise(() =>
      hookServerStatus(rewind.workspaceRoot, rewind.dir!, process.env),
    )
    yield* out.record("hook_server", { ...server })
    // Which hook client the settings run, and whether the native one is built: a hook on the
    // Node client is slower, and that is said, never silent.
    const { hookClientStatus } = yield* Effect.promise(() => import("../hooks/nativeClient.js"))
    const client = hookClientStatus(rewind.workspaceRoot, process.argv[1])
    yield* out.record("hook_client", { ...client })
    yield* out.human(
      `${client.warning === null ? dim("hook client") : yellow("hook client")} ${client.detail}${client.warning === null ? "" : `\n  ${client.warning}`}`,
    )
    yield* out.human(
      server.socket === null
        ? `${dim("hook server")} no socket path fits this workspace (hooks run in their own process)`
        : server.running
          ? `${dim("hook server")} running on ${server.socket} (pid ${server.pid ?? "?"}, idle exit ${server.idleExitMs === null ? "none" : `${Math.round(server.idleExitMs / 1000)} s`})`
          : `${dim("hook server")} not running (the next hook starts one on ${server.socket}; \`rewind serve --workspace-socket\` starts one now, and captures run in its live engine)`,
    )
    const { readProblems } = yield* Effect.promise(() => import("../hooks/hookProblems.js"))
    const problems = readProblems(rewind.dir)
    if (problems.length > 0) {
      const recent = problems.slice(-5)
      yield* out.record("hook_problems", { count: problems.length, recent })
      yield* out.human(`${yellow("hooks")}     ${problems.length} problem(s) logged; the latest:`)
      for (const p of recent) yield* out.human(`  ${iso(p.at)}  ${p.message}`)
    }
    return server
  })

/**
 * The operations a crash left incomplete (`recover`), in one line each: the workspace may be half
 * restored until one is continued or rolled back, and status is where a user looks first.
 */
const reportInterrupted = (rewind: CliRewind, out: Output) =>
  Effect.gen(function* () {
    const pending = yield* expect(rewind.recover())
    if (pending.length === 0) return
    yield* out.record("interrupted", { operations: pending.map(operationSummary) })
    yield* out.human(
      `${yellow("interrupted")} ${pending.length} operation(s) a crash left incomplete: the workspace may hold part of each; \`rewind recover\` lists them, \`rewind recover --continue <id>\` or \`--rollback <id>\` finishes one`,
    )
    for (const op of pending) {
      const { intent } = op.record
      const after = op.files.filter((f) => f.state === "planned").length
      yield* out.human(
        `  ${intent.operationId}  ${intent.kind}, started ${iso(intent.startedAt)}: ${op.damaged !== undefined ? `damaged journal row (${op.damaged})` : `${after} of ${op.files.length} file(s) as after${op.resolvable ? "" : `, ${yellow("some hold neither version")}`}`}`,
      )
    }
  })

type SnapshotStatus = typeof RewindResults.SnapshotStatus.Type
type Watcher = SnapshotStatus["watcher"]

/** What a server says, as the engine declares it (a server of another version may say otherwise). */
const decodeSnapshotStatus = Schema.decodeUnknownOption(RewindResults.SnapshotStatus)

const watcherText = (w: Watcher) =>
  w.active
    ? `${w.backend}, ${w.watchedDirectories} directories watched${w.lastCapture === undefined ? "" : `; last capture ${w.lastCapture.mode === "watched" ? "from the change set" : `a full scan (${w.lastCapture.reason ?? "no reason given"})`}`}`
    : `not running: ${w.reason}`

/**
 * The snapshot usage and watcher. This process runs no live engine; the workspace's hook server,
 * when one runs, does, and its watcher is the one the hooks' captures use: so its whole answer is
 * taken (one computation, in the process that has the store open already), and this process
 * computes it only when no server runs or the server does not answer as declared.
 */
const snapshotStatusOf = (rewind: CliRewind, server: HookServerStatus | undefined, out: Output) =>
  Effect.gen(function* () {
    if (server?.running === true && server.socket !== null) {
      const socket = server.socket
      const { serverSnapshotStatus } = yield* Effect.promise(() => import("../hooks/hookServerStatus.js"))
      const remote = Option.getOrUndefined(
        decodeSnapshotStatus(yield* Effect.promise(() => serverSnapshotStatus(socket, 2_000))),
      )
      yield* out.record(
        "hook_server_watcher",
        remote === undefined ? { answered: false } : { answered: true, ...remote.watcher },
      )
      if (remote !== undefined) return { status: Either.right(remote), fromServer: true, pid: server.pid }
    }
    const local = yield* Effect.either(failOnErrors(expect(rewind.snapshotStatus())))
    return { status: local, fromServer: false, pid: server?.running === true ? server.pid : undefined }
  })

const watcherLine = (st: SnapshotStatus, fromServer: boolean, pid: number | null | undefined) =>
  fromServer
    ? `watcher   in the hook server (pid ${pid ?? "?"}): ${watcherText(st.watcher)}`
    : pid !== undefined && !st.watcher.active
      ? `watcher   none in this process; the hook server (pid ${pid ?? "?"}) did not say whether it watches`
      : `watcher   ${watcherText(st.watcher)}`

export const status = Command.make("status", { ...common, session: sessionOption }, (o) =>
  withRewind(o, false, (rewind, out) =>
    Effect.gen(function* () {
      const all = yield* expect(rewind.listSessions())
      yield* out.record("store", { dir: rewind.dir, workspace: rewind.workspaceRoot, sessions: all.length })
      yield* out.human(`store     ${rewind.dir}\nworkspace ${rewind.workspaceRoot}\nsessions  ${all.length}`)
      // Whether a clean of the workspace would take the store (storeLayout.ts): said, never found out.
      const layout = layoutStatus(rewind.dir, storeLocationOf(rewind.workspaceRoot, rewind.dir).length > 0)
      yield* out.record("store_layout", { ...layout })
      yield* out.human(
        layout.warning === null
          ? `layout    ${layout.layout}${layout.layout === "guarded" ? " (git clean -x and git stash --all leave it)" : ""}`
          : `${yellow("layout")}    ${layout.layout}: ${layout.warning}`,
      )
      yield* reportInterrupted(rewind, out)
      // Which scanner and file operations this process runs with: a missing native module is
      // slower and only re-checked, and is said here as in doctor, never silently.
      const native = nativeStatus()
      yield* out.record("native", { ...native })
      yield* out.human(
        native.loaded
          ? `native    ${native.scanner} scanner, ${native.fileOperations} file operations, reads: ${native.reads}${native.warning === null ? "" : ` (${yellow(native.warning)})`}`
          : `${yellow("native")}    ${native.warning}`,
      )
      // Without a code cache every command starts slower; said, as the native module is.
      const codeCache = codeCacheStatus()
      yield* out.record("code_cache", { ...codeCache })
      yield* out.human(
        codeCache.usable ? `code cache ${codeCache.dir}` : `${yellow("code cache")} ${codeCache.warning}`,
      )
      const server = yield* reportHookProblems(rewind, out)
      const { status: snapshots, fromServer, pid } = yield* snapshotStatusOf(rewind, server, out)
      if (snapshots._tag === "Right") {
        const st = snapshots.right
        yield* out.record("snapshots", { ...st })
        const points = st.pointsPerSession.reduce((n, s) => n + s.points, 0)
        yield* out.human(
          `content   ${st.blobs} blob(s), ${bytes(st.storeBytes)} (shared ${bytes(st.sharedBytes)}, index ${bytes(st.indexBytes)})\npoints    ${points} in ${st.pointsPerSession.length} session(s)`,
        )
        yield* out.human(watcherLine(st, fromServer, pid))
        for (const u of st.unprotected) {
          yield* out.human(`${yellow("unprotected")} ${leftOutLine(u)}`)
        }
      } else {
        yield* out.record("snapshots", { error: snapshots.left.message })
        yield* out.human(`${yellow("snapshots")} cannot be read: ${snapshots.left.message}`)
      }
      const partial =
        snapshots._tag === "Left"
          ? new CliFailure({
              code: ExitCode.partial,
              message: `the snapshot status cannot be read: ${snapshots.left.message}`,
              reason: snapshots.left.reason,
            })
          : undefined
      if (Option.isNone(o.session) && all.length === 0) {
        if (partial !== undefined) return yield* partial
        return
      }
      const sessionId = yield* resolveSession(rewind, o.session)
      const changes = yield* expect(rewind.turnFileChanges(sessionId))
      const files = changes?.files ?? []
      yield* out.record("turn_changes", {
        sessionId,
        turnId: changes?.turnId ?? null,
        linesAdded: changes?.linesAdded ?? 0,
        linesRemoved: changes?.linesRemoved ?? 0,
        files: files.map((f) => ({ path: f.path, linesAdded: f.linesAdded, linesRemoved: f.linesRemoved })),
      })
      yield* out.human(
        `\nsession ${sessionId}, latest turn ${changes?.turnId ?? "(none)"}: ${files.length} file(s) changed`,
      )
      if (files.length > 0) {
        yield* out.human(
          table(
            ["FILE", "CHANGE", "LINES"],
            files.map((f) => [
              f.path,
              f.created ? "created" : f.deleted ? "deleted" : "modified",
              `${green(`+${f.linesAdded}`)} ${red(`-${f.linesRemoved}`)}`,
            ]),
          ),
        )
      }
      if (partial !== undefined) return yield* partial
    }),
  ),
).pipe(
  Command.withDescription(
    "Show the store, its snapshot usage (content, points, unprotected paths) and the latest turn's file changes",
  ),
)
