/**
 * The options every command shares (`--workspace`, `--dir`, `--json`, `--session`), over
 * @effect/cli, and everything of storeAccess.ts (the store for a command's life, failures by tag).
 */
import { Options } from "@effect/cli"
import { SessionId } from "@rewind/contracts"

export * from "./storeAccess.js"

export const common = {
  json: Options.boolean("json").pipe(
    Options.withDescription("Print JSON Lines (each line has a version field v)"),
  ),
  workspace: Options.directory("workspace", { exists: "yes" }).pipe(
    Options.withDescription("The workspace root (default: the current directory)"),
    Options.optional,
  ),
  dir: Options.text("dir").pipe(
    Options.withDescription("The store directory (default: <workspace>/.rewind)"),
    Options.optional,
  ),
}

export const sessionOption = Options.text("session").pipe(
  Options.withSchema(SessionId),
  Options.withDescription("The session (default: the most recently created one)"),
  Options.optional,
)
