/**
 * The CLI's commands for isolated forks' trees: `diff --sessions a b` (what differs between two
 * sessions' trees now, `sessionsDiff`) and `merge <source>` (a three-way merge of a session's tree
 * into another's: the preview lists what it writes and every conflict and prints a token;
 * `--apply <merge point> --token <t>` applies it, with a rescue point; `rewind redo` takes it
 * away). `fork --into <dir>` lives with `fork` in forkCommand.ts.
 */
import { Args, Command, Options } from "@effect/cli"
import { PointId, SessionId } from "@rewind/contracts"
import { Effect, Option } from "effect"
import {
  bold,
  colourPatch,
  describeSide,
  dim,
  green,
  keptLine,
  type Output,
  red,
  table,
  yellow,
} from "./output.js"
import { type CliRewind, common, expect, sessionOption, usage, withRewind } from "./store.js"

/** `rewind diff --sessions a b`: called by `diff` when `--sessions` is given. */
export const diffSessionsCommand = (
  rewind: CliRewind,
  out: Output,
  a: SessionId,
  b: SessionId,
  stat: boolean,
) =>
  Effect.gen(function* () {
    const d = yield* expect(rewind.diffSessions(a, b, { patches: !stat }))
    const count = { added: 0, modified: 0, deleted: 0 }
    for (const e of d.entries) {
      count[e.change]++
      yield* out.record("diff", { path: e.path, change: e.change, a: e.a, b: e.b, patch: e.patch ?? null })
    }
    yield* out.record("diff_summary", { a, b, ...count, unchanged: d.unchanged, skipped: d.skipped })
    if (d.entries.length === 0) {
      yield* out.human(dim(`the trees of ${a} and ${b} hold the same (${d.unchanged} path(s) compared)`))
      return
    }
    yield* out.human(
      table(
        ["CHANGE", "PATH", a, b],
        d.entries.map((e) => [
          e.change === "added" ? green(e.change) : e.change === "deleted" ? red(e.change) : yellow(e.change),
          e.path,
          describeSide(e.a),
          describeSide(e.b),
        ]),
      ),
    )
    for (const e of d.entries)
      if (e.patch !== undefined) yield* out.human(`\n${colourPatch(e.patch.trimEnd())}`)
    yield* out.human(
      `\n${count.added} added, ${count.modified} modified, ${count.deleted} deleted from ${a} to ${b}`,
    )
  })

/** The session a source was forked from, for `merge` without `--session`. */
const sourceOf = (rewind: CliRewind, source: SessionId) =>
  Effect.flatMap(expect(rewind.listSessions()), (all) => {
    const parent = all.find((s) => s.sessionId === source)?.parentId
    return parent === undefined
      ? usage(`session ${source} has no parent to merge into; name the target with --session`)
      : Effect.succeed(parent)
  })

export const merge = Command.make(
  "merge",
  {
    ...common,
    session: sessionOption,
    source: Args.text({ name: "source" }).pipe(
      Args.withSchema(SessionId),
      Args.withDescription(
        "The session whose tree is merged (an isolated fork); into its parent unless --session",
      ),
    ),
    markers: Options.boolean("markers").pipe(
      Options.withDescription(
        "Write overlapping text changes with conflict markers instead of leaving the file",
      ),
    ),
    apply: Options.text("apply").pipe(
      Options.withSchema(PointId),
      Options.withDescription("Apply the previewed merge point (with --token)"),
      Options.optional,
    ),
    token: Options.text("token").pipe(Options.withDescription("The preview's token"), Options.optional),
  },
  (o) =>
    Option.isSome(o.apply) !== Option.isSome(o.token)
      ? usage("--apply <merge point> and --token <token> go together")
      : withRewind(o, false, (rewind, out) =>
          Effect.gen(function* () {
            const target = Option.isSome(o.session) ? o.session.value : yield* sourceOf(rewind, o.source)
            if (Option.isSome(o.apply)) {
              const applied = yield* expect(
                rewind.applyMerge(target, o.apply.pipe(Option.getOrThrow), o.token.pipe(Option.getOrThrow)),
              )
              yield* out.record("merge_applied", {
                targetSessionId: target,
                sourceSessionId: o.source,
                operationId: applied.operationId,
                rescuePointId: applied.rescuePointId,
                files: applied.event.files,
              })
              yield* out.human(
                `merged ${bold(o.source)} into ${bold(target)}: ${applied.event.files.length} path(s) (undo with \`rewind redo --session ${target}\`)`,
              )
              return
            }
            const p = yield* expect(rewind.previewMerge(target, o.source, { markers: o.markers }))
            yield* out.record("merge_preview", {
              targetSessionId: p.targetSessionId,
              sourceSessionId: p.sourceSessionId,
              basePointId: p.basePointId,
              files: p.files,
              conflicts: p.conflicts,
              mergePointId: p.mergePointId ?? null,
              canApply: p.canApply,
              token: p.restore?.token ?? null,
              restoreConflicts: p.restore?.conflicts ?? [],
              restoreProtected: p.restore?.protected ?? [],
            })
            for (const f of p.files) yield* out.human(`${green(f.action)} ${f.path} ${dim(`(${f.from})`)}`)
            for (const c of p.conflicts) {
              yield* out.human(
                `${red("conflict")} ${c.path}: ${c.reason} — ${c.detail}${c.markers ? " (written with markers)" : ""}`,
              )
              for (const h of c.hunks ?? []) {
                yield* out.human(
                  dim(
                    `  base:   ${JSON.stringify(h.base)}\n  source: ${JSON.stringify(h.source)}\n  target: ${JSON.stringify(h.target)}`,
                  ),
                )
              }
            }
            for (const k of p.restore?.protected ?? []) yield* out.human(keptLine(k))
            if (p.files.length === 0) yield* out.human(dim("nothing to merge"))
            else if (p.canApply && p.restore?.token !== undefined) {
              yield* out.human(
                `\napply with: rewind merge ${o.source} --session ${target} --apply ${p.mergePointId} --token ${p.restore.token}`,
              )
            } else yield* out.human(yellow("the merge cannot be applied as it is (see the conflicts above)"))
          }),
        ),
).pipe(
  Command.withDescription(
    "Merge an isolated fork's tree back: three-way per file against the fork base; preview, then --apply with the token",
  ),
)
