/**
 * The MCP tools as data: each tool's input Schema (decoded with `onExcessProperty: "error"`; its
 * JSON Schema is the tool's `inputSchema`), title, description and annotations. Only the tools
 * of the safe subset are here: none rewinds, cuts or forks the conversation, and the two that
 * change files (`restore_point`, `redo`) are annotated destructive.
 */
import type { Tool } from "@modelcontextprotocol/sdk/types.js"
import { PointId, SessionId, TurnId } from "@rewind/contracts"
import { JSONSchema, Schema } from "effect"

const OptionalSession = Schema.optional(
  SessionId.annotations({ description: "The session id (default: the most recently created session)" }),
)
const APoint = PointId.annotations({ description: "A point id (pt-…), as list_points gives it" })

export const inputs = {
  list_checkpoints: Schema.Struct({ sessionId: OptionalSession }),
  list_points: Schema.Struct({ sessionId: OptionalSession }),
  diff_point: Schema.Struct({
    sessionId: OptionalSession,
    pointId: APoint,
    patches: Schema.optional(
      Schema.Boolean.annotations({ description: "Include a unified diff per text file (default true)" }),
    ),
  }),
  preview_restore: Schema.Struct({ sessionId: OptionalSession, pointId: APoint }),
  preview_turn_restore: Schema.Struct({
    sessionId: OptionalSession,
    turnId: TurnId.annotations({
      description: "The turn whose start to go back to, as list_checkpoints gives it",
    }),
  }),
  restore_point: Schema.Struct({
    sessionId: OptionalSession,
    pointId: APoint,
    token: Schema.String.annotations({ description: "The token preview_restore returned for this point" }),
  }),
  redo: Schema.Struct({
    sessionId: OptionalSession,
    dryRun: Schema.optional(
      Schema.Boolean.annotations({
        description:
          "Default true: only say what redo would do and return a token; false (with the token) to run it",
      }),
    ),
    token: Schema.optional(
      Schema.String.annotations({ description: "The token of a redo dry run of this server" }),
    ),
  }),
  capture_now: Schema.Struct({
    sessionId: OptionalSession,
    label: Schema.optional(
      Schema.String.pipe(Schema.pattern(/^[A-Za-z0-9._-]{1,60}$/)).annotations({
        description: "A short label for the point's turn (letters, digits, . _ -); default a timestamp",
      }),
    ),
  }),
  status: Schema.Struct({}),
  gc_preview: Schema.Struct({}),
} as const

export type ToolName = keyof typeof inputs

interface ToolSpec {
  readonly title: string
  readonly description: string
  readonly annotations: {
    readonly readOnlyHint: boolean
    readonly destructiveHint: boolean
    readonly idempotentHint: boolean
    readonly openWorldHint: false
  }
}

const read = {
  readOnlyHint: true,
  destructiveHint: false,
  idempotentHint: true,
  openWorldHint: false,
} as const

export const tools: { readonly [K in ToolName]: ToolSpec } = {
  list_checkpoints: {
    title: "List checkpoints",
    description:
      "Lists the user messages of a session that the workspace can be rewound to (checkpoints), newest last, each with its prompt. Read-only. Use list_points for the snapshot points a restore takes.",
    annotations: read,
  },
  list_points: {
    title: "List points",
    description:
      "Lists the snapshot points of a session (one per captured turn, plus rescue points a restore made), oldest first, with file counts and bytes. Read-only. Pass a pointId from here to diff_point or preview_restore.",
    annotations: read,
  },
  diff_point: {
    title: "Diff a point",
    description:
      "Shows what differs between a point and the workspace now: added, modified and deleted paths and a unified diff per text file. Read-only; run it before deciding to restore.",
    annotations: read,
  },
  preview_restore: {
    title: "Preview a restore",
    description:
      "Dry run of restoring the workspace to a point: what would be written and deleted, the conflicts that forbid it, and the paths it leaves alone because the protection policy keeps them (protected: .git, the store, what the ignore rules exclude now, a link leading out of the root, which no restore makes or takes away), and what the point's capture left out and so cannot put back (leftOut: a nested repository, a file over the size limit, what the scan's budget did not reach). Writes nothing. When it can be applied it returns a token (single use, five minutes) that restore_point requires.",
    annotations: read,
  },
  preview_turn_restore: {
    title: "Preview a restore to before a turn",
    description:
      "Dry run of putting the workspace FILES back as they were before a turn: the same answer as preview_restore, for the engine's turn target (turnRestoreTarget: the turn's point, or one recorded with a tombstone for each file created since, so those are deleted too), with that target: pointId (pass it with the token to restore_point), added (what it deletes beyond the turn's point), leftAlone and laterLeftOut (what it leaves as it is, and why). Writes no workspace file; may record the target point.",
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  },
  restore_point: {
    title: "Restore a point",
    description:
      "Restores the workspace FILES to a point, redeeming the token of a preview_restore made in this server for the same point. Captures a rescue point of everything it touches first; redo undoes it. Refused without a valid token, or when the workspace changed since the preview (preview again). Never touches the conversation.",
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
  },
  redo: {
    title: "Undo the last restore",
    description:
      "Undoes the session's last restore: a restore_point (its files come back; the conversation stays as it is) or a rewind that wrote files (those files, and a conversation cut that rewind made, come back). By default a dry run that returns a token; call again with dryRun false and that token to run it. Refused when a file changed since that restore, or when there is nothing to redo.",
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
  },
  capture_now: {
    title: "Capture a point now",
    description:
      "Captures a snapshot point of the workspace now (a new point each call), so it can be restored later. Adds a point; changes no file.",
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  },
  status: {
    title: "Status",
    description:
      "The store's sessions and snapshot usage: blobs, bytes, points per session and paths left unprotected. Read-only.",
    annotations: read,
  },
  gc_preview: {
    title: "Preview garbage collection",
    description:
      "What garbage collection of the snapshot store would delete and how many bytes it would free; deletes nothing. Read-only.",
    annotations: read,
  },
}

export const inputSchemaOf = (schema: Schema.Schema.AnyNoContext): Tool["inputSchema"] => {
  const { $schema: _ignored, ...rest } = JSONSchema.make(schema) as unknown as Record<string, unknown>
  return { ...rest, type: "object" } as Tool["inputSchema"]
}
