/**
 * The one shape every agent's hook payload is translated into before anything is recorded. The
 * adapters (claudeCode.ts, geminiCli.ts) own the agents' wire formats; `runHook.ts` acts on these
 * events only, so both agents mirror their sessions the same way.
 *
 * Invariants: a translated event names the host session it belongs to (`hostSessionId`, never
 * empty) and the directory the agent ran in (`cwd`); a tool event names the file paths as the
 * agent gave them (absolute or relative to `cwd`), and `pairKey` is what its before- and
 * after-event share, so the after-content is paired with the right before-content.
 */
import type { ExpectedAfter } from "@rewind/core"
import { Either, ParseResult, Schema } from "effect"

/** Which agent a hook command serves: the first part of every Rewind session id it creates. */
export type HookAgent = "claude-code" | "gemini-cli"

/** What a tool does to the workspace, as far as Rewind is concerned. */
export type ToolEffect =
  /**
   * Writes the named files (Write, Edit, write_file, replace, …): a checkpoint per file.
   * `expected`: what the tool says the (single) file holds after it, when its input tells
   * (Write's content, Edit's edits); it lets the after-content be read without the settle wait.
   */
  | {
      readonly kind: "file_write"
      readonly paths: ReadonlyArray<string>
      readonly expected?: ExpectedAfter
    }
  /** Runs a shell command: anything may change, so a point is captured after it. */
  | { readonly kind: "shell" }
  /** Reads, searches, web calls…: nothing to record. */
  | { readonly kind: "none" }

interface Common {
  readonly agent: HookAgent
  readonly hostSessionId: string
  readonly cwd: string
  /** The event name as the agent spelled it, for messages and the problem log. */
  readonly hostEvent: string
}

export type HookEvent =
  | (Common & { readonly kind: "session_start"; readonly source: string | undefined })
  | (Common & { readonly kind: "prompt"; readonly prompt: string })
  | (Common & {
      readonly kind: "before_tool"
      readonly toolName: string
      readonly effect: ToolEffect
      readonly pairKey: string
    })
  | (Common & {
      readonly kind: "after_tool"
      readonly toolName: string
      readonly effect: ToolEffect
      readonly pairKey: string
      /** The tool failed (it may still have changed files: they are looked at all the same). */
      readonly failed: boolean
    })
  | (Common & {
      readonly kind: "turn_end"
      readonly reply: string | undefined
      /** Where the reply can be read when the payload does not carry it (Claude Code's transcript). */
      readonly transcriptPath?: string
    })
  | (Common & { readonly kind: "session_end"; readonly reason: string | undefined })
  /** An event Rewind has nothing to do for (Notification, PreCompact, a future event…). */
  | (Common & { readonly kind: "ignored" })

/** A string field of a tool input, if it is one. */
export const stringField = (input: unknown, name: string): string | undefined => {
  if (typeof input !== "object" || input === null) return undefined
  const value = (input as Record<string, unknown>)[name]
  return typeof value === "string" ? value : undefined
}

/** `stringField`, but an empty string counts as absent (a path, an id). */
export const nonEmptyField = (input: unknown, name: string): string | undefined => {
  const value = stringField(input, name)
  return value === undefined || value.length === 0 ? undefined : value
}

/** A payload that cannot be acted on: nothing is recorded, and `reason` is logged. */
export interface Undecodable {
  readonly kind: "undecodable"
  readonly reason: string
}

/**
 * An agent's payload decoder: its Schema decides what a payload of that agent is (unknown fields
 * ignored), `translate` maps a decoded one to a Rewind event; anything else is `undecodable`
 * with the Schema's own explanation.
 */
export const payloadDecoder =
  <P, I>(agentName: string, payload: Schema.Schema<P, I>, translate: (p: P) => HookEvent | Undecodable) =>
  (json: unknown): HookEvent | Undecodable =>
    Either.match(Schema.decodeUnknownEither(payload)(json), {
      onLeft: (error) => ({
        kind: "undecodable",
        reason: `not a ${agentName} hook payload: ${ParseResult.TreeFormatter.formatErrorSync(error)}`,
      }),
      onRight: translate,
    })
