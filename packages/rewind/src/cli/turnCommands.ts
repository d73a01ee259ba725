/**
 * The CLI's by-turn view of a session (what an agent's hooks record; core's snapshot/sessionTurns.ts):
 * `timeline` (each turn's prompt and the files it changed, shell changes included), and the parts
 * of `diff --turn N`, `restore --turn N` and `redo` that are about turns.
 *
 * `restore --turn N` is a point restore to "as before turn N": without `--token` it previews (the
 * plan and a token, five minutes, single use), with the token it restores, after a rescue point of
 * everything it touches; `rewind redo` then undoes it. Both refuse, writing nothing, when another
 * session of the store wrote one of the files since turn N began (its checkpoints count as another
 * writer): the user decides, with that session's own tools, what to keep.
 */
import { Command, Options } from "@effect/cli"
import type { SessionId } from "@rewind/contracts"
import { listTurns, type OtherWriter, otherWriters, turnTarget } from "@rewind/core"
import { Effect, Option, Schema } from "effect"
import {
  bold,
  CliFailure,
  dim,
  ExitCode,
  green,
  iso,
  keptLine,
  leftOutLaterLines,
  notInPointLines,
  type Output,
  oneLine,
  red,
  table,
  yellow,
} from "./output.js"
import { type CliRewind, common, engine, expect, resolveSession, sessionOption, withRewind } from "./store.js"

/** `--turn <n>`: a turn number as `rewind timeline` shows it. */
export const turnOption = (description: string) =>
  Options.integer("turn").pipe(
    Options.withSchema(Schema.Int.pipe(Schema.positive())),
    Options.withDescription(description),
    Options.optional,
  )

/** The point `diff --turn n` compares with, and the paths created since that it counts as tracked. */
export const turnDiffTarget = (_rewind: CliRewind, sessionId: SessionId, n: number) =>
  Effect.map(engine(turnTarget(sessionId, n, { record: false })), (t) => ({
    pointId: t.pointId,
    tracked: new Set<string>(t.added),
  }))

const otherWritersFailure = (writers: ReadonlyArray<OtherWriter>) =>
  new CliFailure({
    code: ExitCode.failed,
    message: `another session changed ${[...new Set(writers.map((w) => w.path))].join(", ")} since then (${[
      ...new Set(writers.map((w) => `${w.sessionId} with ${w.toolName}`)),
    ].join("; ")}); nothing was written`,
    reason: "conflict",
    details: writers,
  })

const checkOtherWriters = (
  _rewind: CliRewind,
  sessionId: SessionId,
  since: number,
  paths: ReadonlyArray<string>,
) =>
  Effect.flatMap(engine(otherWriters(sessionId, since, paths)), (writers) =>
    writers.length === 0 ? Effect.void : Effect.fail(otherWritersFailure(writers)),
  )

export const timeline = Command.make("timeline", { ...common, session: sessionOption }, (o) =>
  withRewind(o, false, (rewind, out) =>
    Effect.gen(function* () {
      const sessionId = yield* resolveSession(rewind, o.session)
      const turns = yield* engine(listTurns(sessionId))
      for (const t of turns) {
        yield* out.record("turn", {
          sessionId,
          n: t.n,
          turnId: t.turnId,
          prompt: t.prompt,
          startedAt: t.startedAt,
          status: t.status,
          pointId: t.point?.pointId ?? null,
          files: t.files,
          shellKnown: t.shellKnown,
        })
      }
      if (turns.length === 0) {
        yield* out.human(dim(`session ${sessionId} has no turn yet`))
        return
      }
      yield* out.human(`session ${bold(sessionId)}`)
      for (const t of turns) {
        const status =
          t.status === "running" ? yellow("running") : t.status === "aborted" ? red("aborted") : ""
        yield* out.human(
          `\n${bold(`turn ${t.n}`)}  ${iso(t.startedAt)}  ${status}${status ? "  " : ""}${oneLine(t.prompt)}`,
        )
        if (t.point === undefined) yield* out.human(dim("  no point: this turn cannot be restored by number"))
        for (const f of t.files) {
          const change =
            f.change === "added" ? green(f.change) : f.change === "deleted" ? red(f.change) : yellow(f.change)
          yield* out.human(`  ${change.padEnd(8)}  ${f.path}${f.by === "shell" ? dim("  (shell)") : ""}`)
        }
        if (t.files.length === 0) yield* out.human(dim("  no file changed"))
        if (!t.shellKnown && t.point !== undefined)
          yield* out.human(dim("  shell changes: not known until the next point"))
      }
      yield* out.human(
        dim("\nrewind diff --turn N: what changed since before turn N; rewind restore --turn N: put it back"),
      )
    }),
  ),
).pipe(
  Command.withDescription(
    "The session's turns: each prompt and the files it changed (shell changes included)",
  ),
)

/** `restore --turn n`: the preview (no token given) or the restore (with the preview's token). */
export const restoreTurn = (
  rewind: CliRewind,
  out: Output,
  sessionId: SessionId,
  n: number,
  token: Option.Option<string>,
) =>
  Effect.gen(function* () {
    const target = yield* engine(turnTarget(sessionId, n, { record: true }))
    const since = target.turn.point!.capturedAt
    const plan = yield* expect(rewind.previewPointRestore(sessionId, target.pointId))
    yield* checkOtherWriters(
      rewind,
      sessionId,
      since,
      plan.changes.map((c) => c.path),
    )
    if (Option.isSome(token)) {
      out.progress("restoring…")
      const result = yield* expect(rewind.restorePoint(sessionId, target.pointId, token.value)).pipe(
        Effect.ensuring(Effect.sync(out.endProgress)),
      )
      yield* out.record("restore", {
        sessionId,
        turn: n,
        operationId: result.operationId,
        pointId: target.pointId,
        rescuePointId: result.rescuePointId,
        files: result.event.files,
      })
      yield* out.human(
        result.event.files.length === 0
          ? dim(`nothing to change: the workspace is as it was before turn ${n}`)
          : table(
              ["FILE", "ACTION"],
              result.event.files.map((f) => [f.path, f.action]),
            ),
      )
      yield* out.human(
        `restored to before turn ${n}; \`rewind redo\` undoes it (rescue point ${result.rescuePointId})`,
      )
      return
    }
    yield* out.record("turn_preview", {
      sessionId,
      turn: n,
      turnId: target.turn.turnId,
      pointId: target.pointId,
      canApply: plan.canApply,
      changes: plan.changes.map((c) => ({ path: c.path, action: c.action })),
      unchanged: plan.unchanged,
      conflicts: plan.conflicts,
      protected: plan.protected,
      leftOut: plan.leftOut,
      leftAlone: target.leftAlone.map((l) => l.path),
      // Why each was left alone: what turn N's capture reported leaving out at or above it.
      unseen: target.leftAlone,
      // What the latest capture left out since (a name no point can record...): in no point.
      laterLeftOut: target.laterLeftOut,
      token: plan.token ?? null,
      expiresAt: plan.tokenExpiresAt ?? null,
    })
    yield* out.human(
      plan.changes.length === 0
        ? dim(
            plan.protected.length + plan.conflicts.length === 0
              ? `the workspace is already as it was before turn ${n} (${plan.unchanged} path(s) checked)`
              : `nothing to write to be as before turn ${n} (${plan.unchanged} path(s) checked), but for what follows`,
          )
        : table(
            ["FILE", "ACTION"],
            plan.changes.map((c) => [c.path, c.action]),
          ),
    )
    for (const k of plan.protected) yield* out.human(keptLine(k))
    for (const line of notInPointLines(plan.leftOut)) yield* out.human(line)
    for (const { path, at, reason } of target.leftAlone) {
      const where =
        reason === "budget"
          ? "its scan ran out of budget"
          : reason === "ignored"
            ? `ignored then by the rules of ${at}`
            : `${at}: ${reason}`
      yield* out.human(
        `${yellow("left alone")} ${path}: created later, unseen by turn ${n}'s capture (${where})`,
      )
    }
    for (const line of leftOutLaterLines(target.laterLeftOut)) yield* out.human(line)
    for (const c of plan.conflicts)
      yield* out.human(`${yellow("conflict")} ${c.path}: ${c.reason} (${c.detail})`)
    if (!plan.canApply) {
      yield* out.human(red("cannot restore"))
      return yield* new CliFailure({
        code: ExitCode.partial,
        message: `turn ${n} cannot be restored (${plan.conflicts.length} conflict(s))`,
        reason: "restore_conflicts",
      })
    }
    yield* out.human(
      `${green("can restore")}; within 5 minutes run:\n  rewind restore --turn ${n} --token ${plan.token} --session ${sessionId}`,
    )
  })
