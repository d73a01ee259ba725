/**
 * `rewind diff`: what differs between a point (or the workspace as it was before turn N) and the
 * workspace now, added, modified and deleted paths with unified diffs of text files (`--stat`:
 * the paths only); `--sessions <a> <b>` compares two sessions' trees (treeCommands.ts). Without a
 * point or a turn it compares with the session's latest point, as `git diff` compares with the
 * last recorded state.
 */
import { Args, Command, Options } from "@effect/cli"
import { PointId, SessionId } from "@rewind/contracts"
import { Effect, Option, Schema } from "effect"
import {
  CliFailure,
  colourPatch,
  describeSide,
  dim,
  ExitCode,
  green,
  iso,
  leftOutLine,
  red,
  table,
  yellow,
} from "./output.js"
import { type CliRewind, common, expect, resolveSession, sessionOption, usage, withRewind } from "./store.js"
import { diffSessionsCommand } from "./treeCommands.js"
import { turnDiffTarget, turnOption } from "./turnCommands.js"

/** The session's latest point (the last `rewind points` lists, rescue points included). */
const latestPoint = (rewind: CliRewind, sessionId: SessionId) =>
  Effect.gen(function* () {
    const last = (yield* expect(rewind.listPoints(sessionId))).at(-1)
    if (last !== undefined) return last.pointId
    return yield* new CliFailure({
      code: ExitCode.failed,
      message: `session ${sessionId} has no point yet to compare with (rewind capture makes one)`,
      reason: "no_point",
    })
  })

export const diff = Command.make(
  "diff",
  {
    ...common,
    session: sessionOption,
    point: Args.text({ name: "point" }).pipe(
      Args.withSchema(PointId),
      Args.withDescription("The point to compare with (default: the session's latest point)"),
      Args.optional,
    ),
    other: Args.text({ name: "session" }).pipe(
      Args.withDescription("With --sessions: the second session"),
      Args.optional,
    ),
    turn: turnOption("Compare with the workspace as it was before turn N (see `rewind timeline`)"),
    stat: Options.boolean("stat").pipe(
      Options.withDescription("List the changed paths only, without unified diffs"),
    ),
    sessions: Options.boolean("sessions").pipe(
      Options.withDescription("Compare the trees of two sessions now: `rewind diff --sessions <a> <b>`"),
    ),
  },
  (o) =>
    o.sessions
      ? Option.isNone(o.point) || Option.isNone(o.other) || Option.isSome(o.turn)
        ? usage("--sessions takes two session ids: rewind diff --sessions <a> <b>")
        : !Schema.is(SessionId)(o.point.value) || !Schema.is(SessionId)(o.other.value)
          ? usage("--sessions: both arguments must be session ids")
          : withRewind(o, false, (rewind, out) =>
              diffSessionsCommand(
                rewind,
                out,
                o.point.pipe(Option.getOrThrow) as string as SessionId,
                o.other.pipe(Option.getOrThrow) as SessionId,
                o.stat,
              ),
            )
      : Option.isSome(o.other)
        ? usage("a second argument is for --sessions <a> <b>")
        : Option.isSome(o.point) && Option.isSome(o.turn)
          ? usage("give a <point> or --turn <n>, not both")
          : withRewind(o, false, (rewind, out) =>
              Effect.gen(function* () {
                const sessionId = yield* resolveSession(rewind, o.session)
                const { pointId, tracked } = Option.isSome(o.point)
                  ? { pointId: o.point.value, tracked: new Set<string>() }
                  : Option.isSome(o.turn)
                    ? yield* turnDiffTarget(rewind, sessionId, o.turn.value)
                    : { pointId: yield* latestPoint(rewind, sessionId), tracked: new Set<string>() }
                const found = yield* expect(rewind.diffPoint(sessionId, pointId, { patches: !o.stat }))
                // Before turn N, the paths created since did not exist: not "untracked", they are undone.
                const d = {
                  ...found,
                  entries: found.entries.map((e) => (tracked.has(e.path) ? { ...e, untracked: false } : e)),
                }
                const count = { added: 0, modified: 0, deleted: 0 }
                for (const e of d.entries) {
                  count[e.change]++
                  yield* out.record("diff", {
                    path: e.path,
                    change: e.change,
                    untracked: e.untracked,
                    point: e.point,
                    now: e.now,
                    patch: e.patch ?? null,
                    noPatch: e.noPatch ?? null,
                  })
                }
                yield* out.record("diff_summary", {
                  sessionId,
                  pointId: d.pointId,
                  capturedAt: d.capturedAt,
                  ...count,
                  unchanged: d.unchanged,
                  skipped: d.skipped,
                })
                if (d.entries.length === 0) {
                  yield* out.human(
                    dim(`no difference from point ${d.pointId} (${d.unchanged} path(s) compared)`),
                  )
                } else {
                  yield* out.human(
                    table(
                      ["CHANGE", "PATH", "POINT", "NOW"],
                      d.entries.map((e) => [
                        e.change === "added"
                          ? green(e.change)
                          : e.change === "deleted"
                            ? red(e.change)
                            : yellow(e.change),
                        e.untracked ? `${e.path} ${dim("(not in the point)")}` : e.path,
                        describeSide(e.point),
                        describeSide(e.now),
                      ]),
                    ),
                  )
                  for (const e of d.entries) {
                    if (e.patch !== undefined) yield* out.human(`\n${colourPatch(e.patch.trimEnd())}`)
                    else if (e.noPatch !== undefined && e.noPatch !== "disabled") {
                      yield* out.human(dim(`\n${e.path}: no text diff (${e.noPatch.replace("_", " ")})`))
                    }
                  }
                  yield* out.human(
                    `\n${count.added} added, ${count.modified} modified, ${count.deleted} deleted since ${d.pointId} (${iso(d.capturedAt)})`,
                  )
                }
                for (const s of d.skipped) {
                  yield* out.human(`${yellow("not compared")} ${leftOutLine(s)}`)
                }
              }),
            ),
).pipe(
  Command.withDescription(
    "Show what differs between a point and the workspace now: added, modified, deleted, with unified diffs of text files",
  ),
)
