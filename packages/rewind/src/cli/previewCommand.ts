/**
 * `rewind preview <point|message>`: what restoring a point would change (with the token `restore`
 * needs) or what undoing a message's file changes onward would do. Writes nothing but the token;
 * a plan that cannot be applied makes the run partial (exit 1).
 */
import { Args, Command } from "@effect/cli"
import { type MessageId, PointId, type SessionId } from "@rewind/contracts"
import { Effect } from "effect"
import {
  CliFailure,
  dim,
  ExitCode,
  green,
  keptLine,
  notInPointLines,
  type Output,
  red,
  shownPath,
  table,
  yellow,
} from "./output.js"
import { type CliRewind, common, expect, resolveSession, sessionOption, withRewind } from "./store.js"

/** Whether `id` names a point of the session (then it is previewed as a point, not a message). */
const isPoint = (rewind: CliRewind, sessionId: SessionId, id: string) =>
  Effect.map(expect(rewind.listPoints(sessionId)), (all) => all.some((p) => p.pointId === id))

const previewMessage = (rewind: CliRewind, out: Output, sessionId: SessionId, message: MessageId) =>
  Effect.gen(function* () {
    const p = yield* expect(rewind.previewFileRewind({ sessionId, messageId: message }))
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
    for (const i of p.ignored) {
      const why =
        i.reason === "ignore_rule"
          ? "the ignore rules exclude it"
          : `made by ${i.toolName}, a shell-like tool`
      yield* out.human(`${yellow("left alone")} ${shownPath(i.path)}: ${why}`)
    }
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

const previewPoint = (rewind: CliRewind, out: Output, sessionId: SessionId, pointId: PointId) =>
  Effect.gen(function* () {
    const p = yield* expect(rewind.previewPointRestore(sessionId, pointId))
    yield* out.record("point_preview", {
      sessionId,
      pointId,
      canApply: p.canApply,
      changes: p.changes.map((c) => ({ path: c.path, action: c.action })),
      unchanged: p.unchanged,
      conflicts: p.conflicts,
      protected: p.protected,
      leftOut: p.leftOut,
      token: p.token ?? null,
      expiresAt: p.tokenExpiresAt ?? null,
    })
    yield* out.human(
      p.changes.length === 0
        ? dim(
            p.protected.length + p.conflicts.length === 0
              ? `the workspace already matches point ${pointId} (${p.unchanged} path(s) checked)`
              : `nothing to write for point ${pointId} (${p.unchanged} path(s) checked), but for what follows`,
          )
        : table(
            ["FILE", "ACTION"],
            p.changes.map((c) => [c.path, c.action]),
          ),
    )
    for (const k of p.protected) yield* out.human(keptLine(k))
    for (const line of notInPointLines(p.leftOut)) yield* out.human(line)
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

export const preview = Command.make(
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
