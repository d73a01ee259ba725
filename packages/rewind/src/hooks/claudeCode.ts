/**
 * Claude Code's hook payloads (https://code.claude.com/docs/en/hooks, "Hook input"): one JSON
 * object on stdin with the common fields `session_id`, `transcript_path`, `cwd`,
 * `hook_event_name` (and `permission_mode`), plus each event's own: `source` (SessionStart),
 * `prompt` (UserPromptSubmit), `tool_name` / `tool_input` / `tool_use_id` (PreToolUse,
 * PostToolUse with `tool_response`, PostToolUseFailure with `error`), `stop_hook_active` and,
 * in newer releases, `last_assistant_message` (Stop), `reason` (SessionEnd). A Stop without the
 * reply has it read from `transcript_path` (transcriptReply.ts), so the turn can be forked at.
 *
 * Only the fields Rewind needs are decoded; any other field (a newer Claude Code adds some with
 * most releases) is ignored, never fatal. The file tools are Write, Edit, MultiEdit
 * (`tool_input.file_path`) and NotebookEdit (`tool_input.notebook_path`); the shell tool is Bash.
 * The before- and after-event of one tool call are paired by `tool_use_id`.
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
  tool_name: Schema.optional(Schema.String),
  tool_input: Schema.optional(Schema.Unknown),
  tool_use_id: Schema.optional(Schema.String),
  reason: Schema.optional(Schema.String),
  transcript_path: Schema.optional(Schema.String),
  last_assistant_message: Schema.optional(Schema.String),
})
type Payload = typeof Payload.Type

const FILE_TOOLS: Readonly<Record<string, string>> = {
  Write: "file_path",
  Edit: "file_path",
  MultiEdit: "file_path",
  NotebookEdit: "notebook_path",
}

type Edit = ExpectedAfter & { readonly _tag: "Edited" }

const editOf = (input: unknown): Edit["edits"][number] | undefined => {
  const oldString = stringField(input, "old_string")
  const newString = stringField(input, "new_string")
  if (oldString === undefined || newString === undefined) return undefined
  const replaceAll = (input as { replace_all?: unknown }).replace_all === true
  return { oldString, newString, ...(replaceAll ? { replaceAll } : {}) }
}

/**
 * What the tool says the file holds after it: Write's `content`; Edit's one edit; MultiEdit's
 * `edits`, in order. NotebookEdit (a cell of JSON) and anything malformed: no expectation.
 */
const expectedOf = (toolName: string, input: unknown): ExpectedAfter | undefined => {
  switch (toolName) {
    case "Write": {
      const content = stringField(input, "content")
      return content === undefined ? undefined : { _tag: "Written", content }
    }
    case "Edit": {
      const edit = editOf(input)
      return edit === undefined ? undefined : { _tag: "Edited", edits: [edit] }
    }
    case "MultiEdit": {
      const list = (input as { edits?: unknown }).edits
      if (!Array.isArray(list) || list.length === 0) return undefined
      const edits = list.map(editOf)
      return edits.every((e) => e !== undefined) ? { _tag: "Edited", edits } : undefined
    }
    default:
      return undefined
  }
}

const effectOf = (toolName: string, input: unknown): ToolEffect => {
  const pathField = FILE_TOOLS[toolName]
  if (pathField !== undefined) {
    const path = nonEmptyField(input, pathField)
    if (path === undefined) return { kind: "none" }
    const expected = expectedOf(toolName, input)
    return { kind: "file_write", paths: [path], ...(expected === undefined ? {} : { expected }) }
  }
  return toolName === "Bash" ? { kind: "shell" } : { kind: "none" }
}

const translate = (p: Payload): HookEvent | Undecodable => {
  const common = {
    agent: "claude-code" as const,
    hostSessionId: p.session_id,
    cwd: p.cwd,
    hostEvent: p.hook_event_name,
  }
  switch (p.hook_event_name) {
    case "SessionStart":
      return { ...common, kind: "session_start", source: p.source }
    case "UserPromptSubmit":
      return p.prompt === undefined
        ? { kind: "undecodable", reason: "UserPromptSubmit without a prompt field" }
        : { ...common, kind: "prompt", prompt: p.prompt }
    case "PreToolUse":
    case "PostToolUse":
    case "PostToolUseFailure": {
      if (p.tool_name === undefined) {
        return { kind: "undecodable", reason: `${p.hook_event_name} without a tool_name field` }
      }
      const effect = effectOf(p.tool_name, p.tool_input)
      // Without the id, the tool name and input are what the two events share.
      const pairKey = p.tool_use_id ?? `${p.tool_name}\u0000${JSON.stringify(p.tool_input ?? null)}`
      return p.hook_event_name === "PreToolUse"
        ? { ...common, kind: "before_tool", toolName: p.tool_name, effect, pairKey }
        : {
            ...common,
            kind: "after_tool",
            toolName: p.tool_name,
            effect,
            pairKey,
            failed: p.hook_event_name === "PostToolUseFailure",
          }
    }
    case "Stop":
      // The reply itself when this release sends it; else where runHook can read it.
      return p.last_assistant_message !== undefined && p.last_assistant_message.length > 0
        ? { ...common, kind: "turn_end", reply: p.last_assistant_message }
        : {
            ...common,
            kind: "turn_end",
            reply: undefined,
            ...(p.transcript_path === undefined || p.transcript_path === ""
              ? {}
              : { transcriptPath: p.transcript_path }),
          }
    case "SessionEnd":
      return { ...common, kind: "session_end", reason: p.reason }
    default:
      return { ...common, kind: "ignored" }
  }
}

/** One Claude Code hook payload (already parsed from JSON) as a Rewind hook event. */
export const claudeCodeEvent = payloadDecoder("Claude Code", Payload, translate)
