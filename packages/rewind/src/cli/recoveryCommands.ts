/**
 * The CLI's undo-the-undo and crash-recovery commands over the service: `redo` (the engine's one
 * redo: bring back what the session's last file-writing rewind or point restore replaced) and `recover` (list operations a crash left
 * incomplete; `--continue <id>` or `--rollback <id>` finishes one). A journal row that does not
 * decode is listed by its id with what is wrong, after the others; nothing can be done with it here.
 */
import { Command, Options } from "@effect/cli"
import { OperationId } from "@rewind/contracts"
import type { IncompleteOperation } from "@rewind/core"
import { Effect, Option } from "effect"
import { bold, dim, green, iso, keptLine, table, yellow } from "./output.js"
import { common, expect, resolveSession, sessionOption, usage, withRewind } from "./store.js"

export const redo = Command.make("redo", { ...common, session: sessionOption }, (o) =>
  withRewind(o, false, (rewind, out) =>
    Effect.gen(function* () {
      const sessionId = yield* resolveSession(rewind, o.session)
      // The engine's one redo: it takes the newest redo entry, a rewind's or a point restore's.
      out.progress("redoing…")
      const result = yield* expect(rewind.redo(sessionId)).pipe(Effect.ensuring(Effect.sync(out.endProgress)))
      yield* out.record("redo", {
        sessionId,
        operationId: result.operationId,
        redoneOperationId: result.redoneOperationId,
        files: result.files,
        kept: result.kept,
        activeBranch: result.activeBranch,
      })
      if (result.files.length > 0) {
        yield* out.human(
          table(
            ["FILE", "ACTION"],
            result.files.map((f) => [f.path, f.action]),
          ),
        )
      }
      for (const k of result.kept) yield* out.human(keptLine(k))
      yield* out.human(
        `redid: undid ${result.redoneOperationId}; files are as they were before it, the conversation has ${result.activeBranch.length} message(s)`,
      )
    }),
  ),
).pipe(
  Command.withDescription(
    "Undo the session's last restore: a rewind that wrote files (cascade, restore --checkpoint/--message; files and conversation come back) or a point restore (restore --turn, restore <point>; files come back, the conversation stays)",
  ),
)

const operationOption = (name: string, description: string) =>
  Options.text(name).pipe(
    Options.withSchema(OperationId),
    Options.withDescription(description),
    Options.optional,
  )

/** An interrupted operation in the fields `recover` and `status` both print it with. */
export const operationSummary = (op: IncompleteOperation) => ({
  operationId: op.record.intent.operationId,
  sessionId: op.record.intent.sessionId,
  kind: op.record.intent.kind,
  startedAt: op.record.intent.startedAt,
  recorded: op.recorded,
  resolvable: op.resolvable,
})

export const recover = Command.make(
  "recover",
  {
    ...common,
    continue: operationOption("continue", "Finish this operation: write what it meant to write"),
    rollback: operationOption("rollback", "Undo this operation: write back what was there before"),
  },
  (o) => {
    if (Option.isSome(o.continue) && Option.isSome(o.rollback)) {
      return usage("give --continue <operation> or --rollback <operation>, not both")
    }
    const target = Option.orElse(
      Option.map(o.continue, (id) => ({ id, resolution: "continue" as const })),
      () => Option.map(o.rollback, (id) => ({ id, resolution: "rollback" as const })),
    )
    return withRewind(o, false, (rewind, out) =>
      Effect.gen(function* () {
        if (Option.isSome(target)) {
          const { id, resolution } = target.value
          const result = yield* expect(rewind.resolveOperation(id, resolution))
          yield* out.record("resolved", {
            operationId: result.operationId,
            resolution: result.resolution,
            files: result.files,
            ...(result.tree === undefined ? {} : { tree: result.tree }),
          })
          if (result.files.length > 0) {
            yield* out.human(
              table(
                ["FILE", "ACTION"],
                result.files.map((f) => [f.path, f.action]),
              ),
            )
          }
          if (result.tree?.stagingRemoved === true) {
            yield* out.human(`removed the fork's private directory ${result.tree.staging}`)
          }
          if (result.tree?.treeLeft === true) {
            yield* out.human(
              yellow(
                `${result.tree.root} holds a tree no session owns (the fork's, renamed into place before the crash, or put there since); it was left as it is: remove it by hand if it is not wanted`,
              ),
            )
          }
          yield* out.human(
            `${green(resolution === "continue" ? "continued" : "rolled back")} operation ${bold(result.operationId)}`,
          )
          return
        }
        const pending = yield* expect(rewind.recover())
        for (const op of pending) {
          yield* out.record("operation", {
            ...operationSummary(op),
            files: op.files,
            ...(op.links.length === 0 ? {} : { links: op.links }),
            ...(op.tree === undefined ? {} : { tree: op.tree }),
            ...(op.damaged === undefined ? {} : { damaged: op.damaged }),
          })
        }
        if (pending.length === 0) {
          yield* out.human(dim("no interrupted operation: nothing to recover"))
          return
        }
        for (const op of pending) {
          const { intent } = op.record
          if (op.damaged !== undefined) {
            yield* out.human(`${bold(intent.operationId)}  ${yellow("damaged journal row")}: ${op.damaged}`)
            yield* out.human(
              dim(
                "  it cannot be continued or rolled back; `rewind doctor` names it too, restore the store from a backup to recover it",
              ),
            )
            continue
          }
          yield* out.human(
            `${bold(intent.operationId)}  ${intent.kind} in session ${intent.sessionId}, started ${iso(intent.startedAt)}${op.recorded ? " (recorded in the session: continue it)" : ""}`,
          )
          const holds = (state: string) =>
            state === "rescue"
              ? "before (rescue)"
              : state === "planned"
                ? "after (planned)"
                : state === "removed"
                  ? "removed, not yet remade"
                  : yellow(state === "changed" ? "changed since" : "unreadable")
          if (op.tree !== undefined) {
            const state = op.tree.state
            yield* out.human(
              `  tree ${op.tree.root} (private directory ${op.tree.staging}${state === undefined ? "" : `: ${state.staging}; target ${state.root}`})`,
            )
          }
          if (op.files.length > 0 || op.links.length > 0) {
            yield* out.human(
              table(
                ["FILE", "HOLDS"],
                [
                  ...op.files.map((f) => [f.path, holds(f.state)]),
                  ...op.links.map((l) => [`${l.path} (link)`, holds(l.state)]),
                ],
              ),
            )
          }
          yield* out.human(
            op.resolvable
              ? dim(
                  `  rewind recover --continue ${intent.operationId}${op.recorded ? "" : `   or   rewind recover --rollback ${intent.operationId}`}`,
                )
              : yellow("  a file holds neither version: resolve it by hand, then run recover again"),
          )
        }
      }),
    )
  },
).pipe(
  Command.withDescription(
    "List operations a crash left incomplete; --continue <id> or --rollback <id> finishes one",
  ),
)
