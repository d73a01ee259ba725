/**
 * The CLI's restores: `restore` (to a point with its token, a checkpoint's before-content, a
 * message's latest checkpoint, or before turn N) and `cascade` (undo everything from a user
 * message onward: files, conversation or both). `rewind redo` (recoveryCommands.ts) undoes them.
 */
import { Args, Command, Options } from "@effect/cli"
import { CheckpointId, MessageId, PointId } from "@rewind/contracts"
import { Effect, Option } from "effect"
import { bold, dim, type Output, table } from "./output.js"
import { common, expect, resolveSession, sessionOption, usage, withRewind } from "./store.js"
import { restoreTurn, turnOption } from "./turnCommands.js"

const messageArg = (description: string) =>
  Args.text({ name: "message" }).pipe(Args.withSchema(MessageId), Args.withDescription(description))

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

export const restore = Command.make(
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
          const result = yield* expect(
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
          ? yield* expect(rewind.rewindToCheckpoint(sessionId, Option.getOrThrow(o.checkpoint)))
          : yield* expect(rewind.rewindToMessageCheckpoint(sessionId, Option.getOrThrow(o.message)))
        yield* printRestore(out, result)
      }),
    )
  },
).pipe(
  Command.withDescription(
    "Restore the workspace to a point (<point> --token), or files from one checkpoint (--checkpoint) or a message's latest (--message)",
  ),
)

export const cascade = Command.make(
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
        const result = yield* expect(rewind.rewindCascade(sessionId, o.message, o.scope)).pipe(
          Effect.ensuring(Effect.sync(out.endProgress)),
        )
        yield* printRestore(out, result)
      }),
    ),
).pipe(
  // Named `cascade`, not `rewind`: a subcommand may not share the root command's name.
  Command.withDescription("Cascade rewind: undo everything from a user message onward"),
)
