/**
 * `rewind fork`: fork a session at a completed turn's reply (in a tree of its own with `--into`),
 * or open a side chat that inherits the conversation (`--side-chat`).
 */
import { resolve as resolvePath } from "node:path"
import { Args, Command, Options } from "@effect/cli"
import { MessageId } from "@rewind/contracts"
import { Effect, Option } from "effect"
import { bold, bytes, dim, leftOutLine, yellow } from "./output.js"
import { common, expect, resolveSession, sessionOption, usage, withRewind } from "./store.js"

export const fork = Command.make(
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
                ? yield* expect(rewind.createSideChat(sessionId))
                : yield* expect(
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
                  yield* out.human(dim(`${copied ? "copied" : "left out"} ${leftOutLine(s)}`))
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
