/**
 * The slash-command grammar hosts expose in their TUIs (`/rewind …`, `/fork …`, `/side …`), parsed
 * into a typed command. Parsing is pure and total: anything that is not a valid command comes back
 * as a `SlashCommandError` with a message that says what would have been valid.
 */
import { CheckpointId, MessageId } from "@rewind/contracts"
import { Either, Schema } from "effect"

export type SlashCommand =
  | { readonly _tag: "RewindStatus" }
  | { readonly _tag: "RewindHelp" }
  | { readonly _tag: "RewindCheckpoint"; readonly checkpoint: "latest" | CheckpointId }
  | { readonly _tag: "RewindConversation"; readonly messageId: MessageId }
  | { readonly _tag: "RewindCode"; readonly messageId: MessageId }
  | { readonly _tag: "RewindBoth"; readonly messageId: MessageId }
  | {
      readonly _tag: "RewindCascade"
      readonly scope: "conversation" | "workspace" | "both"
      readonly messageId: MessageId
    }
  | {
      readonly _tag: "Fork"
      readonly checkpoint: "latest" | CheckpointId | undefined
      /** `/fork --isolated <dir>`: the child gets its own tree in `dir` (absolute). */
      readonly isolated?: string
    }
  | { readonly _tag: "SideChat"; readonly question: string }

export class SlashCommandError extends Schema.TaggedError<SlashCommandError>()("SlashCommandError", {
  input: Schema.String,
  message: Schema.String,
}) {}

export const SLASH_HELP = [
  "/rewind                        show the latest checkpoint (same as /rewind status)",
  "/rewind help                   this help (also -h)",
  "/rewind latest                 restore the files of the latest checkpoint",
  "/rewind <checkpointId>         restore the file of that checkpoint to before its change",
  "/rewind conversation <msgId>   wind the conversation back to before that user message (alias: message)",
  "/rewind code <msgId>           restore the latest checkpoint of that message (alias: workspace)",
  "/rewind both <msgId>           restore files first, then wind the conversation back",
  "/rewind cascade <scope> <msgId> undo every checkpoint from that message on, newest first",
  "                               (scope: conversation|message, code|workspace, or both)",
  "/fork [latest|<checkpointId>] [--isolated <dir>]  fork a new session from a checkpoint (in a tree of its own with --isolated)",
  "/side <question>               ask in a side chat that inherits the context (alias: /btw)",
].join("\n")

const SCOPE_ALIASES: Record<string, "conversation" | "workspace" | "both"> = {
  conversation: "conversation",
  message: "conversation",
  code: "workspace",
  workspace: "workspace",
  both: "both",
}

const decodeMessageId = Schema.decodeUnknownEither(MessageId)
const decodeCheckpointId = Schema.decodeUnknownEither(CheckpointId)

const fail = (input: string, message: string) =>
  Either.left(new SlashCommandError({ input, message: `${message}\n\n${SLASH_HELP}` }))

const messageIdArg = (input: string, raw: string | undefined, what: string) => {
  if (raw === undefined) return fail(input, `${what} needs a message id`)
  return Either.match(decodeMessageId(raw), {
    onLeft: () => fail(input, `'${raw}' is not a valid message id`),
    onRight: (id) => Either.right(id),
  })
}

/** Parses one line typed by a person. Leading/trailing whitespace and repeated spaces are ignored. */
export const parseSlashCommand = (input: string): Either.Either<SlashCommand, SlashCommandError> => {
  const trimmed = input.trim()
  const [head = "", ...args] = trimmed.split(/\s+/)
  switch (head.toLowerCase()) {
    case "/rewind":
      return parseRewind(trimmed, args)
    case "/fork": {
      const flag = args.findIndex((a) => a.toLowerCase() === "--isolated")
      let isolated: string | undefined
      if (flag !== -1) {
        isolated = args[flag + 1]
        if (isolated === undefined || isolated.startsWith("--")) {
          return fail(trimmed, "/fork --isolated needs the directory the new tree goes in")
        }
        if (!isolated.startsWith("/"))
          return fail(trimmed, `/fork --isolated: '${isolated}' is not an absolute path`)
        args.splice(flag, 2)
      }
      const extra = isolated === undefined ? {} : { isolated }
      if (args.length > 1) return fail(trimmed, "/fork takes at most one argument besides --isolated <dir>")
      const [arg] = args
      if (arg === undefined) return Either.right({ _tag: "Fork", checkpoint: undefined, ...extra })
      if (arg.toLowerCase() === "latest")
        return Either.right({ _tag: "Fork", checkpoint: "latest", ...extra })
      return Either.match(decodeCheckpointId(arg), {
        onLeft: () => fail(trimmed, `'${arg}' is not a valid checkpoint id`),
        onRight: (checkpoint) => Either.right({ _tag: "Fork" as const, checkpoint, ...extra }),
      })
    }
    case "/side":
    case "/btw": {
      const question = trimmed.slice(head.length).trim()
      if (question.length === 0) return fail(trimmed, `${head} needs a question`)
      return Either.right({ _tag: "SideChat", question })
    }
    default:
      return fail(trimmed, `'${head}' is not a Rewind command`)
  }
}

const parseRewind = (
  input: string,
  args: ReadonlyArray<string>,
): Either.Either<SlashCommand, SlashCommandError> => {
  const [sub, ...rest] = args
  if (sub === undefined) return Either.right({ _tag: "RewindStatus" })
  const lower = sub.toLowerCase()
  const noMore = (n: number) =>
    rest.length > n ? fail(input, `unexpected '${rest.slice(n).join(" ")}'`) : undefined
  switch (lower) {
    case "status":
      return noMore(0) ?? Either.right({ _tag: "RewindStatus" })
    case "help":
    case "-h":
    case "--help":
      return noMore(0) ?? Either.right({ _tag: "RewindHelp" })
    case "latest":
      return noMore(0) ?? Either.right({ _tag: "RewindCheckpoint", checkpoint: "latest" })
    case "conversation":
    case "message":
    case "code":
    case "workspace":
    case "both": {
      const extra = noMore(1)
      if (extra) return extra
      const scope = SCOPE_ALIASES[lower]!
      return Either.map(
        messageIdArg(input, rest[0], `/rewind ${lower}`),
        (messageId): SlashCommand =>
          scope === "conversation"
            ? { _tag: "RewindConversation", messageId }
            : scope === "workspace"
              ? { _tag: "RewindCode", messageId }
              : { _tag: "RewindBoth", messageId },
      )
    }
    case "cascade": {
      const [scopeRaw, id] = rest
      const scope = scopeRaw === undefined ? undefined : SCOPE_ALIASES[scopeRaw.toLowerCase()]
      if (scope === undefined) {
        return fail(
          input,
          `/rewind cascade needs a scope (conversation, code or both), got '${scopeRaw ?? ""}'`,
        )
      }
      const extra = noMore(2)
      if (extra) return extra
      return Either.map(
        messageIdArg(input, id, "/rewind cascade"),
        (messageId): SlashCommand => ({
          _tag: "RewindCascade",
          scope,
          messageId,
        }),
      )
    }
    default: {
      const extra = noMore(0)
      if (extra) return extra
      return Either.match(decodeCheckpointId(sub), {
        onLeft: () => fail(input, `'${sub}' is neither a /rewind subcommand nor a valid checkpoint id`),
        onRight: (checkpoint) => Either.right({ _tag: "RewindCheckpoint" as const, checkpoint }),
      })
    }
  }
}
