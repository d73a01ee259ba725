/**
 * Gemini CLI's hook payloads (https://geminicli.com/docs/hooks/reference, "Base input schema" and
 * each event's "Input Fields"): one JSON object on stdin with `session_id`, `transcript_path`,
 * `cwd`, `hook_event_name`, `timestamp`, plus `source` (SessionStart), `prompt` (BeforeAgent),
 * `tool_name` / `tool_input` (BeforeTool; AfterTool adds `tool_response` with an optional
 * `error`), `prompt_response` (AfterAgent), `reason` (SessionEnd).
 *
 * Unknown fields are ignored. The file tools are `write_file` and `replace` (the built-in edit
 * tool; `tool_input.file_path`); the shell tool is `run_shell_command`. Gemini CLI's tool events
 * carry no call id, so a BeforeTool and its AfterTool are paired by the tool name and the file
 * path (the documented `tool_input` of AfterTool is the original arguments).
 */
import type { ExpectedAfter } from "@rewind/core"
import { Schema } from "effect"
import {
  type HookEvent,
  nonEmptyField,
  payloadDecoder,
  stringField,
  type ToolEffect,
  type Undecodable,
} from "./hookEvent.js"

const Payload = Schema.Struct({
  session_id: Schema.NonEmptyString,
  cwd: Schema.String,
  hook_event_name: Schema.String,
  source: Schema.optional(Schema.String),
  prompt: Schema.optional(Schema.String),
  prompt_response: Schema.optional(Schema.String),
  tool_name: Schema.optional(Schema.String),
  tool_input: Schema.optional(Schema.Unknown),
  tool_response: Schema.optional(Schema.Unknown),
  reason: Schema.optional(Schema.String),
})
type Payload = typeof Payload.Type

const FILE_TOOLS = new Set(["write_file", "replace"])

// `file_path` in current releases; `absolute_path` in some earlier ones.
const filePath = (input: unknown): string | undefined =>
  nonEmptyField(input, "file_path") ?? nonEmptyField(input, "absolute_path")

/**
 * What the tool says the file holds after it: write_file's `content`; replace's one edit, applied
 * to every occurrence (replace changes all `expected_replacements` of them, one by default, and
 * fails when the count differs, which leaves the file as it was: the guess then simply misses).
 */
const expectedOf = (toolName: string, input: unknown): ExpectedAfter | undefined => {
  if (toolName === "write_file") {
    const content = stringField(input, "content")
    return content === undefined ? undefined : { _tag: "Written", content }
  }
  const oldString = stringField(input, "old_string")
  const newString = stringField(input, "new_string")
  if (oldString === undefined || newString === undefined) return undefined
  return { _tag: "Edited", edits: [{ oldString, newString, replaceAll: true }] }
}

const effectOf = (toolName: string, input: unknown): ToolEffect => {
  if (FILE_TOOLS.has(toolName)) {
    const path = filePath(input)
    if (path === undefined) return { kind: "none" }
    const expected = expectedOf(toolName, input)
    return { kind: "file_write", paths: [path], ...(expected === undefined ? {} : { expected }) }
  }
  return toolName === "run_shell_command" ? { kind: "shell" } : { kind: "none" }
}

const failedResponse = (response: unknown): boolean =>
  typeof response === "object" &&
  response !== null &&
  "error" in response &&
  (response as { error: unknown }).error !== undefined &&
  (response as { error: unknown }).error !== null

const translate = (p: Payload): HookEvent | Undecodable => {
  const common = {
    agent: "gemini-cli" as const,
    hostSessionId: p.session_id,
    cwd: p.cwd,
    hostEvent: p.hook_event_name,
  }
  switch (p.hook_event_name) {
    case "SessionStart":
      return { ...common, kind: "session_start", source: p.source }
    case "BeforeAgent":
      return p.prompt === undefined
        ? { kind: "undecodable", reason: "BeforeAgent without a prompt field" }
        : { ...common, kind: "prompt", prompt: p.prompt }
    case "BeforeTool":
    case "AfterTool": {
      if (p.tool_name === undefined) {
        return { kind: "undecodable", reason: `${p.hook_event_name} without a tool_name field` }
      }
      const effect = effectOf(p.tool_name, p.tool_input)
      const pairKey = `${p.tool_name}\u0000${effect.kind === "file_write" ? effect.paths.join("\u0000") : ""}`
      return p.hook_event_name === "BeforeTool"
        ? { ...common, kind: "before_tool", toolName: p.tool_name, effect, pairKey }
        : {
            ...common,
            kind: "after_tool",
            toolName: p.tool_name,
            effect,
            pairKey,
            failed: failedResponse(p.tool_response),
          }
    }
    case "AfterAgent":
      return { ...common, kind: "turn_end", reply: p.prompt_response }
    case "SessionEnd":
      return { ...common, kind: "session_end", reason: p.reason }
    default:
      return { ...common, kind: "ignored" }
  }
}

/** One Gemini CLI hook payload (already parsed from JSON) as a Rewind hook event. */
export const geminiCliEvent = payloadDecoder("Gemini CLI", Payload, translate)
