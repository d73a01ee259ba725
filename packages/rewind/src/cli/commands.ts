/**
 * The CLI's conversation and checkpoint commands: init, sessions, log, status, preview, restore,
 * cascade, fork, doctor (the snapshot and recovery commands are in their own modules), and the
 * list of every command. Each opens the store through the facade, prints human text or JSON
 * Lines, and fails with a `CliFailure` carrying its exit code.
 */

import { resolve as resolvePath } from "node:path"
import { Args, Command, Options } from "@effect/cli"
import { CheckpointId, MessageId, PointId, SessionId } from "@rewind/contracts"
import { Effect, Option } from "effect"
import { liveEngineStatus, nativeStatus } from "../internal/doctor.js"
import type { Rewind } from "../openRewind.js"
import { hook, install, uninstall } from "./hookCommands.js"
import {
  bold,
  bytes,
  CliFailure,
  dim,
  ExitCode,
  green,
  iso,
  type Output,
  oneLine,
  red,
  table,
  yellow,
} from "./output.js"
import { recover, redo } from "./recoveryCommands.js"
import { capture, diff, gc, points } from "./snapshotCommands.js"
import {
  type CommonOptions,
  common,
  expect,
  resolveSession,
  sessionOption,
  usage,
  withRewind,
} from "./store.js"
import { merge } from "./treeCommands.js"
import { restoreTurn, timeline, turnOption } from "./turnCommands.js"

const messageArg = (description: string) =>
  Args.text({ name: "message" }).pipe(Args.withSchema(MessageId), Args.withDescription(description))

const init = Command.make("init", common, (o: CommonOptions) =>
  withRewind(o, true, (rewind, out) =>
    Effect.andThen(
      out.record("init", { workspace: rewind.workspaceRoot, dir: rewind.dir }),
      out.human(`Rewind store ready in ${bold(rewind.dir ?? "")} for workspace ${rewind.workspaceRoot}`),
    ),
  ),
).pipe(Command.withDescription("Create the store (.rewind) in the current or --workspace directory"))

const sessions = Command.make("sessions", common, (o) =>
  withRewind(o, false, (rewind, out) =>
    Effect.gen(function* () {
      const all = yield* expect(() => rewind.listSessions())
      for (const s of all) {
        yield* out.record("session", {
          sessionId: s.sessionId,
          kind: s.kind,
          parentId: s.parentId ?? null,
          title: s.title,
          createdAt: s.createdAt,
          updatedAt: s.updatedAt,
          version: s.version,
        })
      }
      yield* out.human(
        all.length === 0
          ? dim("no sessions")
          : table(
              ["SESSION", "KIND", "CREATED", "EVENTS", "TITLE"],
              all.map((s) => [s.sessionId, s.kind, iso(s.createdAt), String(s.version), s.title]),
            ),
      )
    }),
  ),
).pipe(Command.withDescription("List the sessions in the store, newest first"))

const log = Command.make(
  "log",
  { ...common, session: Args.text({ name: "session" }).pipe(Args.withSchema(SessionId)) },
  (o) =>
    withRewind(o, false, (rewind, out) =>
      Effect.gen(function* () {
        const entries = yield* expect(() => rewind.transcript(o.session))
        const rows: Array<Array<string>> = []
        for (const e of entries) {
          const text = e.parts
            .map((p) =>
              p.kind === "text" ? (p.text ?? "") : `[${p.kind}${p.toolName ? ` ${p.toolName}` : ""}]`,
            )
            .join(" ")
          yield* out.record("message", {
            messageId: e.message.id,
            turnId: e.message.turnId,
            role: e.message.role,
            status: e.message.status,
            compacted: e.compacted,
            createdAt: e.message.createdAt,
            text,
          })
          rows.push([
            e.message.id,
            e.compacted ? dim(e.message.role) : e.message.role,
            iso(e.message.createdAt),
            oneLine(text),
          ])
        }
        yield* out.human(
          rows.length === 0 ? dim("no messages") : table(["MESSAGE", "ROLE", "AT", "TEXT"], rows),
        )
      }),
    ),
).pipe(Command.withDescription("Print a session's transcript (its active branch)"))

/**
 * The workspace's hook server (the socket the hook client reaches, whether it answers, its pid
 * and idle exit), then what agent hooks could not do (kept by `rewind hook`, which never fails
 * the agent): the problems only when there are any.
 */
const reportHookProblems = (rewind: Rewind, out: Output) =>
  Effect.gen(function* () {
    if (rewind.dir === undefined) return
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
          : `${dim("hook server")} not running (the next hook starts one on ${server.socket})`,
    )
    const { readProblems } = yield* Effect.promise(() => import("../hooks/hookProblems.js"))
    const problems = readProblems(rewind.dir)
    if (problems.length === 0) return
    const recent = problems.slice(-5)
    yield* out.record("hook_problems", { count: problems.length, recent })
    yield* out.human(`${yellow("hooks")}     ${problems.length} problem(s) logged; the latest:`)
    for (const p of recent) yield* out.human(`  ${iso(p.at)}  ${p.message}`)
  })

const status = Command.make("status", { ...common, session: sessionOption }, (o) =>
  withRewind(o, false, (rewind, out) =>
    Effect.gen(function* () {
      const all = yield* expect(() => rewind.listSessions())
      yield* out.record("store", { dir: rewind.dir, workspace: rewind.workspaceRoot, sessions: all.length })
      yield* out.human(`store     ${rewind.dir}\nworkspace ${rewind.workspaceRoot}\nsessions  ${all.length}`)
      // Which scanner and file operations this process runs with: a missing native module is
      // slower and only re-checked, and is said here as in doctor, never silently.
      const native = nativeStatus()
      yield* out.record("native", { ...native })
      yield* out.human(
        native.loaded
          ? `native    ${native.scanner} scanner, ${native.fileOperations} file operations`
          : `${yellow("native")}    ${native.warning}`,
      )
      yield* reportHookProblems(rewind, out)
      const snapshots = yield* Effect.either(expect(() => rewind.snapshotStatus()))
      if (snapshots._tag === "Right") {
        const st = snapshots.right
        yield* out.record("snapshots", { ...st })
        const points = st.pointsPerSession.reduce((n, s) => n + s.points, 0)
        yield* out.human(
          `content   ${st.blobs} blob(s), ${bytes(st.storeBytes)} (shared ${bytes(st.sharedBytes)}, index ${bytes(st.indexBytes)})\npoints    ${points} in ${st.pointsPerSession.length} session(s)`,
        )
        const w = st.watcher
        yield* out.human(
          w.active
            ? `watcher   ${w.backend}, ${w.watchedDirectories} directories watched${w.lastCapture === undefined ? "" : `; last capture ${w.lastCapture.mode === "watched" ? "from the change set" : `a full scan (${w.lastCapture.reason ?? "no reason given"})`}`}`
            : `watcher   not running: ${w.reason}`,
        )
        for (const u of st.unprotected) {
          yield* out.human(
            `${yellow("unprotected")} ${u.path}: ${u.reason}${u.detail ? ` (${u.detail})` : ""}`,
          )
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
      const changes = yield* expect(() => rewind.turnFileChanges(sessionId))
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

/** Whether `id` names a point of the session (then it is previewed as a point, not a message). */
const isPoint = (rewind: Rewind, sessionId: SessionId, id: string) =>
  Effect.map(
    expect(() => rewind.listPoints(sessionId)),
    (all) => all.some((p) => p.pointId === id),
  )

const previewMessage = (rewind: Rewind, out: Output, sessionId: SessionId, message: MessageId) =>
  Effect.gen(function* () {
    const p = yield* expect(() => rewind.previewFileRewind({ sessionId, messageId: message }))
    yield* out.record("preview", {
      sessionId,
      canApply: p.canApply,
      checkpointIds: p.checkpointIds,
      files: p.files,
      unsafe: p.unsafe,
      ignored: p.ignored,
    })
    yield* out.human(
      p.files.length === 0
        ? dim("no file would change")
        : table(
            ["FILE", "NOW", "AFTER"],
            p.files.map((f) => [
              f.path,
              f.currentHash === null ? "(absent)" : f.currentHash.slice(0, 12),
              f.targetHash === null ? "(deleted)" : f.targetHash.slice(0, 12),
            ]),
          ),
    )
    for (const u of p.unsafe) yield* out.human(`${yellow("unsafe")} ${u.path}: ${u.message}`)
    yield* out.human(p.canApply ? green("can apply") : red("cannot apply"))
    if (!p.canApply) {
      return yield* new CliFailure({
        code: ExitCode.partial,
        message: `the preview cannot be applied (${p.unsafe.length} unsafe file(s))`,
        reason: p.unsafe.length > 0 ? "unsafe_files" : "nothing_to_undo",
      })
    }
  })

const previewPoint = (rewind: Rewind, out: Output, sessionId: SessionId, pointId: PointId) =>
  Effect.gen(function* () {
    const p = yield* expect(() => rewind.previewPointRestore(sessionId, pointId))
    yield* out.record("point_preview", {
      sessionId,
      pointId,
      canApply: p.canApply,
      changes: p.changes.map((c) => ({ path: c.path, action: c.action })),
      unchanged: p.unchanged,
      conflicts: p.conflicts,
      token: p.token ?? null,
      expiresAt: p.tokenExpiresAt ?? null,
    })
    yield* out.human(
      p.changes.length === 0
        ? dim(`the workspace already matches point ${pointId} (${p.unchanged} path(s) checked)`)
        : table(
            ["FILE", "ACTION"],
            p.changes.map((c) => [c.path, c.action]),
          ),
    )
    for (const c of p.conflicts)
      yield* out.human(`${yellow("conflict")} ${c.path}: ${c.reason} (${c.detail})`)
    if (!p.canApply) {
      yield* out.human(red("cannot restore"))
      return yield* new CliFailure({
        code: ExitCode.partial,
        message: `point ${pointId} cannot be restored (${p.conflicts.length} conflict(s))`,
        reason: "restore_conflicts",
      })
    }
    yield* out.human(
      `${green("can restore")}; within 5 minutes run:\n  rewind restore ${pointId} --token ${p.token} --session ${sessionId}`,
    )
  })

const preview = Command.make(
  "preview",
  {
    ...common,
    session: sessionOption,
    target: Args.text({ name: "point|message" }).pipe(
      Args.withSchema(PointId),
      Args.withDescription(
        "A point id (preview restoring it; prints the --token for restore) or a user message id (preview undoing its file changes onward)",
      ),
    ),
  },
  (o) =>
    withRewind(o, false, (rewind, out) =>
      Effect.gen(function* () {
        const sessionId = yield* resolveSession(rewind, o.session)
        return (yield* isPoint(rewind, sessionId, o.target))
          ? yield* previewPoint(rewind, out, sessionId, o.target)
          : yield* previewMessage(rewind, out, sessionId, o.target as string as MessageId)
      }),
    ),
).pipe(
  Command.withDescription(
    "Preview restoring a point (issues the token restore needs) or undoing file changes from a message onward; writes nothing",
  ),
)

const printRestore = (
  out: Output,
  result: {
    readonly operationId: string | undefined
    readonly checkpointIds: ReadonlyArray<string>
    readonly files: ReadonlyArray<{ readonly path: string; readonly action: string }>
    readonly conversation?: { readonly removedMessageIds: ReadonlyArray<string> } | undefined
  },
) =>
  Effect.gen(function* () {
    yield* out.record("restore", {
      operationId: result.operationId ?? null,
      checkpointIds: result.checkpointIds,
      files: result.files,
      removedMessageIds: result.conversation?.removedMessageIds ?? [],
    })
    if (result.files.length > 0) {
      yield* out.human(
        table(
          ["FILE", "ACTION"],
          result.files.map((f) => [f.path, f.action]),
        ),
      )
    }
    if (result.conversation !== undefined) {
      yield* out.human(`conversation: ${result.conversation.removedMessageIds.length} message(s) removed`)
    }
  })

const restore = Command.make(
  "restore",
  {
    ...common,
    session: sessionOption,
    point: Args.text({ name: "point" }).pipe(
      Args.withSchema(PointId),
      Args.withDescription(
        "Restore the workspace to this point (needs --token from `rewind preview <point>`)",
      ),
      Args.optional,
    ),
    token: Options.text("token").pipe(
      Options.withDescription("The token `rewind preview <point>` printed (5 minutes, single use)"),
      Options.optional,
    ),
    checkpoint: Options.text("checkpoint").pipe(
      Options.withSchema(CheckpointId),
      Options.withDescription("Put back the before-content of this checkpoint"),
      Options.optional,
    ),
    message: Options.text("message").pipe(
      Options.withSchema(MessageId),
      Options.withDescription("Restore the latest live checkpoint tied to this user message"),
      Options.optional,
    ),
    turn: turnOption(
      "Put every file back as it was before turn N (see `rewind timeline`): previews and prints a token; run again with --token to restore",
    ),
  },
  (o) => {
    const given = [
      Option.isSome(o.point),
      Option.isSome(o.checkpoint),
      Option.isSome(o.message),
      Option.isSome(o.turn),
    ].filter(Boolean).length
    if (given !== 1) {
      return usage(
        "give exactly one of <point> (with --token), --checkpoint <id> or --message <id> (or --turn <n>, then --token)",
      )
    }
    if (Option.isSome(o.turn)) {
      const n = o.turn.value
      return withRewind(o, false, (rewind, out) =>
        Effect.flatMap(resolveSession(rewind, o.session), (sessionId) =>
          restoreTurn(rewind, out, sessionId, n, o.token),
        ),
      )
    }
    if (Option.isSome(o.point) && Option.isNone(o.token)) {
      return usage(
        `restoring a point needs --token: run \`rewind preview ${o.point.value}\` and pass the token it prints`,
      )
    }
    if (Option.isNone(o.point) && Option.isSome(o.token)) {
      return usage("--token goes with a <point> or --turn; --checkpoint and --message restore without one")
    }
    return withRewind(o, false, (rewind, out) =>
      Effect.gen(function* () {
        const sessionId = yield* resolveSession(rewind, o.session)
        if (Option.isSome(o.point)) {
          const pointId = o.point.value
          out.progress("restoring…")
          const result = yield* expect(() =>
            rewind.restorePoint(sessionId, pointId, Option.getOrThrow(o.token)),
          ).pipe(Effect.ensuring(Effect.sync(out.endProgress)))
          yield* out.record("restore", {
            sessionId,
            operationId: result.operationId,
            pointId,
            rescuePointId: result.rescuePointId,
            files: result.event.files,
          })
          yield* out.human(
            result.event.files.length === 0
              ? dim("nothing to change: the workspace already matches the point")
              : table(
                  ["FILE", "ACTION"],
                  result.event.files.map((f) => [f.path, f.action]),
                ),
          )
          yield* out.human(
            `restored to ${bold(pointId)}; undo with a restore of rescue point ${result.rescuePointId}`,
          )
          return
        }
        const result = Option.isSome(o.checkpoint)
          ? yield* expect(() => rewind.rewindToCheckpoint(sessionId, Option.getOrThrow(o.checkpoint)))
          : yield* expect(() => rewind.rewindCode(sessionId, Option.getOrThrow(o.message)))
        yield* printRestore(out, result)
      }),
    )
  },
).pipe(
  Command.withDescription(
    "Restore the workspace to a point (<point> --token), or files from one checkpoint (--checkpoint) or a message's latest (--message)",
  ),
)

const cascade = Command.make(
  "cascade",
  {
    ...common,
    session: sessionOption,
    message: messageArg("The user message to go back to (it and everything after are undone)"),
    scope: Options.choice("scope", ["both", "workspace", "conversation"]).pipe(
      Options.withDescription(
        "What to undo: files and conversation (both), files only, or conversation only",
      ),
      Options.withDefault("both"),
    ),
  },
  (o) =>
    withRewind(o, false, (rewind, out) =>
      Effect.gen(function* () {
        const sessionId = yield* resolveSession(rewind, o.session)
        out.progress("rewinding…")
        const result = yield* expect(() => rewind.rewindCascade(sessionId, o.message, o.scope)).pipe(
          Effect.ensuring(Effect.sync(out.endProgress)),
        )
        yield* printRestore(out, result)
      }),
    ),
).pipe(
  // Named `cascade`, not `rewind`: a subcommand may not share the root command's name.
  Command.withDescription("Cascade rewind: undo everything from a user message onward"),
)

const fork = Command.make(
  "fork",
  {
    ...common,
    session: sessionOption,
    message: Args.text({ name: "message" }).pipe(
      Args.withSchema(MessageId),
      Args.withDescription("A completed turn's final reply to fork at"),
      Args.optional,
    ),
    sideChat: Options.boolean("side-chat").pipe(
      Options.withDescription("Open a side chat that inherits the conversation instead"),
    ),
    into: Options.text("into").pipe(
      Options.withDescription(
        "Give the fork a tree of its own in this directory (new or empty, outside the workspace), materialised from the fork point",
      ),
      Options.optional,
    ),
    copyUnrecorded: Options.boolean("copy-unrecorded").pipe(
      Options.withDescription(
        "With --into: also copy what the fork point left out (node_modules, ignored output)",
      ),
    ),
  },
  (o) =>
    o.sideChat === Option.isSome(o.message)
      ? usage("give a reply message id to fork at, or --side-chat (not both)")
      : o.sideChat && Option.isSome(o.into)
        ? usage("--into is for a fork, not a side chat")
        : withRewind(o, false, (rewind, out) =>
            Effect.gen(function* () {
              const sessionId = yield* resolveSession(rewind, o.session)
              const workspace = Option.match(o.into, {
                onNone: () => undefined,
                onSome: (dir) => ({
                  mode: "isolated" as const,
                  root: resolvePath(dir),
                  ...(o.copyUnrecorded ? { copyUnrecorded: true } : {}),
                }),
              })
              const result = o.sideChat
                ? yield* expect(() => rewind.createSideChat(sessionId))
                : yield* expect(() =>
                    rewind.forkAtMessage(sessionId, o.message.pipe(Option.getOrThrow), undefined, workspace),
                  )
              yield* out.record("fork", {
                command: result.command,
                parentSessionId: result.parentSessionId,
                childSessionId: result.childSessionId,
                copiedMessageCount: result.copiedMessageCount,
                replayed: result.replayed,
                isolated: result.isolated ?? null,
              })
              yield* out.human(
                `${result.command === "side_chat" ? "side chat" : "fork"} ${bold(result.childSessionId)} (${result.copiedMessageCount} message(s) copied)`,
              )
              const tree = result.isolated
              if (tree !== undefined) {
                yield* out.human(
                  `its own tree: ${bold(tree.root)} (${tree.files} file(s), ${tree.links} link(s), ${bytes(tree.bytes)}; ${tree.cloned} cloned, ${tree.written} written)`,
                )
                for (const s of tree.leftOut) {
                  const copied = tree.copied.some((c) => c === s.path || c.startsWith(`${s.path}/`))
                  yield* out.human(
                    dim(
                      `${copied ? "copied" : "left out"} ${s.path}: ${s.reason}${s.detail ? ` (${s.detail})` : ""}`,
                    ),
                  )
                }
                for (const s of tree.notMaterialised)
                  yield* out.human(yellow(`not materialised ${s.path}: ${s.reason}`))
              }
            }),
          ),
).pipe(
  Command.withDescription(
    "Fork a session at a reply (in a tree of its own with --into <dir>), or open a side chat (--side-chat)",
  ),
)

const doctor = Command.make(
  "doctor",
  {
    ...common,
    repair: Options.boolean("repair").pipe(
      Options.withDescription(
        "Also remove what is safe to remove (orphan temp files of interrupted blob writes)",
      ),
    ),
  },
  (o) =>
    withRewind(o, false, (rewind, out) =>
      Effect.gen(function* () {
        const report = yield* expect(() =>
          rewind.doctor({
            repair: o.repair,
            onProgress: (n) => out.progress(`verifying artifacts… ${n}`),
          }),
        ).pipe(Effect.ensuring(Effect.sync(out.endProgress)))
        yield* out.record("doctor", {
          ok: report.ok,
          database: report.database ?? null,
          schemaVersion: report.schemaVersion ?? null,
          artifacts: report.artifacts,
          references: report.references,
          journal: report.journal,
          tempFiles: report.tempFiles,
          problems: report.problems,
          repaired: report.repaired,
          native: report.native,
          liveEngine: liveEngineStatus(),
        })
        const live = liveEngineStatus()
        const { hookClientStatus } = yield* Effect.promise(() => import("../hooks/nativeClient.js"))
        const hookClient = hookClientStatus(rewind.workspaceRoot, process.argv[1])
        yield* out.record("hook_client", { ...hookClient })
        const mark = (ok: boolean) => (ok ? green("ok") : red("FAILED"))
        const has = (...kinds: ReadonlyArray<string>) => report.problems.some((p) => kinds.includes(p.kind))
        yield* out.human(
          table(
            ["CHECK", "RESULT", "DETAIL"],
            [
              ["store opens", green("ok"), rewind.dir ?? ""],
              [
                "sqlite integrity",
                report.database === undefined ? dim("n/a") : mark(report.database.ok),
                report.database?.problems.join("; ") ?? "",
              ],
              [
                "schema version",
                report.schemaVersion === undefined ? dim("n/a") : green("ok"),
                report.schemaVersion === undefined ? "" : String(report.schemaVersion),
              ],
              [
                "artifact hashes",
                mark(report.artifacts.bad.length === 0),
                `${report.artifacts.checked} checked, ${report.artifacts.bytes} bytes, ${report.artifacts.bad.length} bad`,
              ],
              [
                "references",
                mark(!has("missing_blob", "manifest_unreadable", "missing_parent", "stream_unreadable")),
                `${report.references.checked} followed in ${report.references.sessions} session(s)`,
              ],
              [
                "operation journal",
                mark(!has("incomplete_operation", "journal_unreadable")),
                `${report.journal.operations} operation(s), ${report.journal.incomplete} incomplete`,
              ],
              [
                "temp files",
                mark(!has("orphan_temp_file", "stray_file")),
                `${report.tempFiles.orphans} orphan(s), ${report.tempFiles.removed} removed, ${report.tempFiles.inFlight} in flight`,
              ],
              [
                "native module",
                report.native.loaded ? green("ok") : yellow("warning"),
                report.native.loaded
                  ? `${report.native.scanner} scanner, ${report.native.fileOperations} file operations`
                  : (report.native.warning ?? ""),
              ],
              ["live engine", live.available ? green("ok") : yellow("warning"), live.detail],
              [
                "hook client",
                hookClient.warning === null ? green("ok") : yellow("warning"),
                hookClient.warning ?? hookClient.detail,
              ],
            ],
          ),
        )
        for (const p of report.problems) yield* out.human(`${red(p.kind)} ${p.message}`)
        for (const line of report.repaired) yield* out.human(`${green("repaired")} ${line}`)
        if (!report.ok) {
          const repairable = report.problems.every((p) => p.repairable)
          return yield* new CliFailure({
            code: ExitCode.partial,
            message: repairable
              ? "doctor found problems that `rewind doctor --repair` can fix"
              : "the store opens but doctor found problems",
            reason: "doctor_problems",
          })
        }
      }),
    ),
).pipe(
  Command.withDescription(
    "Check the store: SQLite integrity and schema version, every artifact's hash, every reference, the journal, temp files (--repair removes orphan temp files)",
  ),
)

/** Every registered command, in the order `rewind --help` lists them. */
export const commands = [
  init,
  sessions,
  log,
  status,
  capture,
  points,
  diff,
  preview,
  restore,
  cascade,
  redo,
  fork,
  merge,
  recover,
  gc,
  doctor,
  hook,
  install,
  uninstall,
  timeline,
] as const
