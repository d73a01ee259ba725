/**
 * `rewind mcp`: a Model Context Protocol server (the official SDK) for agents that call tools
 * themselves. A small, safe projection of the operation table, picked by name: list checkpoints
 * and points, diff, preview a restore, restore with the preview's token, redo, capture now,
 * status and a GC preview; resources for a session's timeline and a point's diff.
 *
 * Invariants:
 * - the conversation is the host's: no tool rewinds, cuts or forks it (no cascade, no
 *   rewindConversation, no fork); `restore_point` writes files only, and `redo` only brings back
 *   what the session's last rewind undid;
 * - a destructive tool runs only with a token that a preview of THIS server issued for the same
 *   session and target, once: a token from elsewhere (another server, the CLI, a guess) is
 *   refused before the engine is called; the engine then checks its own token and the workspace
 *   again (`restore_point`);
 * - a refusal is a tool result with `isError: true` and the refusal's message, never a protocol
 *   error, so the model reads what to do next;
 * - arguments are decoded with Effect Schemas whose JSON Schemas are the tools' `inputSchema`.
 */
import { randomBytes } from "node:crypto"
import { Server } from "@modelcontextprotocol/sdk/server/index.js"
import {
  CallToolRequestSchema,
  type CallToolResult,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema,
  ReadResourceRequestSchema,
  type Tool,
} from "@modelcontextprotocol/sdk/types.js"
import { PointId, SessionId } from "@rewind/contracts"
import { Effect, Either, JSONSchema, ParseResult, Schema } from "effect"
import type { Outcome, ServedMethod } from "../server/rpcServer.js"

/** The operations this server uses, by their names in the operation table. */
export type McpOperations = Readonly<
  Record<
    | "listSessions"
    | "listPoints"
    | "listRewindPoints"
    | "diffPoint"
    | "previewPointRestore"
    | "restorePoint"
    | "redo"
    | "capturePoint"
    | "snapshotStatus"
    | "previewCleanup"
    | "transcript",
    ServedMethod
  >
>

/** How long a token of this server's own previews is honoured (the engine's is five minutes too). */
const TOKEN_MS = 5 * 60 * 1000

const OptionalSession = Schema.optional(
  SessionId.annotations({ description: "The session id (default: the most recently created session)" }),
)
const APoint = PointId.annotations({ description: "A point id (pt-…), as list_points gives it" })

const inputs = {
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

type ToolName = keyof typeof inputs

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

const tools: { readonly [K in ToolName]: ToolSpec } = {
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
      "Dry run of restoring the workspace to a point: what would be written and deleted, and the conflicts that forbid it. Writes nothing. When it can be applied it returns a token (single use, five minutes) that restore_point requires.",
    annotations: read,
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

const inputSchemaOf = (schema: Schema.Schema.AnyNoContext): Tool["inputSchema"] => {
  const { $schema: _ignored, ...rest } = JSONSchema.make(schema) as unknown as Record<string, unknown>
  return { ...rest, type: "object" } as Tool["inputSchema"]
}

const text = (value: unknown): CallToolResult => ({
  content: [{ type: "text", text: JSON.stringify(value, null, 2) }],
})

const refusal = (message: string, kind = "invalid_input"): CallToolResult => ({
  content: [{ type: "text", text: `${kind}: ${message}` }],
  isError: true,
})

class ToolRefused {
  constructor(
    readonly kind: string,
    readonly message: string,
  ) {}
}

/** Builds the MCP server over the operations. */
export const makeMcpServer = (ops: McpOperations, info: { readonly version: string }) => {
  /** Tokens of this server's previews: token → what it was issued for, and until when. */
  const issued = new Map<
    string,
    { readonly tool: "restore" | "redo"; readonly target: string; readonly until: number }
  >()

  const run = async (
    method: keyof McpOperations,
    args: ReadonlyArray<unknown>,
    signal: AbortSignal | undefined,
  ): Promise<unknown> => {
    const outcome: Outcome = await Effect.runPromise(
      ops[method](...args),
      signal === undefined ? {} : { signal },
    )
    if (!outcome.ok) {
      const r = outcome.refusal as { kind: string; message: string }
      throw new ToolRefused(r.kind, r.message)
    }
    return outcome.value
  }

  const sessionOf = async (sessionId: string | undefined, signal: AbortSignal | undefined) => {
    if (sessionId !== undefined) return sessionId
    const sessions = (await run("listSessions", [], signal)) as ReadonlyArray<{ sessionId: string }>
    if (sessions[0] === undefined) throw new ToolRefused("session_not_found", "the store has no session yet")
    return sessions[0].sessionId
  }

  const issue = (tool: "restore" | "redo", target: string, engineToken?: string) => {
    const now = Date.now()
    // Tokens nobody redeemed are forgotten once expired, so the map stays small.
    for (const [t, entry] of issued) if (entry.until < now) issued.delete(t)
    const token = engineToken ?? `mcp1.${randomBytes(16).toString("hex")}`
    issued.set(token, { tool, target, until: now + TOKEN_MS })
    return token
  }

  /** Spends a token of this server's previews; refuses any other. */
  const redeem = (tool: "restore" | "redo", target: string, token: string | undefined) => {
    const entry = token === undefined ? undefined : issued.get(token)
    if (token === undefined || entry === undefined || entry.tool !== tool || entry.target !== target) {
      throw new ToolRefused(
        "token_invalid",
        tool === "restore"
          ? "restore_point needs the token of a preview_restore made in this server for this session and point; call preview_restore first"
          : "redo needs the token of a redo dry run made in this server for this session; call redo with dryRun true first",
      )
    }
    issued.delete(token)
    if (entry.until < Date.now())
      throw new ToolRefused("token_expired", "that preview is older than five minutes; preview again")
  }

  const handlers: {
    readonly [K in ToolName]: (
      input: (typeof inputs)[K]["Type"],
      signal: AbortSignal | undefined,
    ) => Promise<unknown>
  } = {
    list_checkpoints: async (input, signal) =>
      run("listRewindPoints", [await sessionOf(input.sessionId, signal)], signal),
    list_points: async (input, signal) =>
      run("listPoints", [await sessionOf(input.sessionId, signal)], signal),
    diff_point: async (input, signal) =>
      run(
        "diffPoint",
        [await sessionOf(input.sessionId, signal), input.pointId, { patches: input.patches ?? true }],
        signal,
      ),
    preview_restore: async (input, signal) => {
      const sessionId = await sessionOf(input.sessionId, signal)
      const preview = (await run("previewPointRestore", [sessionId, input.pointId], signal)) as {
        token?: string
        canApply: boolean
      }
      if (preview.token !== undefined) issue("restore", `${sessionId} ${input.pointId}`, preview.token)
      return { sessionId, ...preview }
    },
    restore_point: async (input, signal) => {
      const sessionId = await sessionOf(input.sessionId, signal)
      redeem("restore", `${sessionId} ${input.pointId}`, input.token)
      return run("restorePoint", [sessionId, input.pointId, input.token], signal)
    },
    redo: async (input, signal) => {
      const sessionId = await sessionOf(input.sessionId, signal)
      if (input.dryRun !== false) {
        return {
          sessionId,
          dryRun: true,
          wouldDo:
            "undo this session's last restore (a restore_point, or a rewind that wrote files): those files (and a conversation cut a rewind made) come back; refused if a file changed since",
          token: issue("redo", sessionId),
        }
      }
      redeem("redo", sessionId, input.token)
      return run("redo", [sessionId], signal)
    },
    capture_now: async (input, signal) => {
      const sessionId = await sessionOf(input.sessionId, signal)
      const turn = `mcp-${input.label ?? new Date().toISOString().replace(/[:.]/g, "-")}-${randomBytes(3).toString("hex")}`
      return run("capturePoint", [sessionId, turn], signal)
    },
    status: async (_input, signal) => ({
      sessions: await run("listSessions", [], signal),
      snapshots: await run("snapshotStatus", [], signal),
    }),
    gc_preview: async (_input, signal) => run("previewCleanup", [], signal),
  }

  const server = new Server(
    { name: "rewind", version: info.version },
    {
      capabilities: { tools: {}, resources: {} },
      instructions:
        "Rewind keeps snapshot points of the workspace. Inspect with list_points, diff_point and preview_restore (read-only); restore_point and redo change files and need the token of a preview made here. The conversation is yours: these tools never rewind it.",
    },
  )

  server.setRequestHandler(ListToolsRequestSchema, async () => ({
    tools: (Object.keys(tools) as Array<ToolName>).map((name) => ({
      name,
      title: tools[name].title,
      description: tools[name].description,
      inputSchema: inputSchemaOf(inputs[name] as Schema.Schema.AnyNoContext),
      annotations: { title: tools[name].title, ...tools[name].annotations },
    })),
  }))

  server.setRequestHandler(CallToolRequestSchema, async (request, extra): Promise<CallToolResult> => {
    const name = request.params.name as ToolName
    if (!(name in tools)) return refusal(`no tool named ${JSON.stringify(request.params.name)}`, "not_found")
    const decoded = Schema.decodeUnknownEither(inputs[name] as Schema.Schema.AnyNoContext, {
      onExcessProperty: "error",
    })(request.params.arguments ?? {})
    if (Either.isLeft(decoded)) {
      const [issue] = ParseResult.ArrayFormatter.formatErrorSync(decoded.left)
      return refusal(
        `${name}: ${[...(issue?.path ?? [])].join(".") || "arguments"}: ${issue?.message ?? "not valid"}`,
      )
    }
    try {
      const handler = handlers[name] as (input: unknown, signal: AbortSignal | undefined) => Promise<unknown>
      return text(await handler(decoded.right, extra.signal))
    } catch (error) {
      if (error instanceof ToolRefused) return refusal(error.message, error.kind)
      throw error
    }
  })

  // Resources: a session's timeline (its transcript and points), and a point's diff.
  const timelineUri = (sessionId: string) => `rewind://sessions/${encodeURIComponent(sessionId)}/timeline`
  server.setRequestHandler(ListResourcesRequestSchema, async (_request, extra) => {
    const sessions = (await run("listSessions", [], extra.signal)) as ReadonlyArray<{
      sessionId: string
      title: string
    }>
    return {
      resources: sessions.map((s) => ({
        uri: timelineUri(s.sessionId),
        name: `timeline of ${s.title} (${s.sessionId})`,
        mimeType: "application/json",
      })),
    }
  })
  server.setRequestHandler(ListResourceTemplatesRequestSchema, async () => ({
    resourceTemplates: [
      {
        uriTemplate: "rewind://sessions/{sessionId}/timeline",
        name: "A session's timeline",
        description: "The session's active conversation branch and its snapshot points, as JSON",
        mimeType: "application/json",
      },
      {
        uriTemplate: "rewind://sessions/{sessionId}/points/{pointId}/diff",
        name: "A point's diff",
        description: "What differs between a point and the workspace now, as JSON with unified diffs",
        mimeType: "application/json",
      },
    ],
  }))
  server.setRequestHandler(ReadResourceRequestSchema, async (request, extra) => {
    const uri = request.params.uri
    const timeline = /^rewind:\/\/sessions\/([^/]+)\/timeline$/.exec(uri)
    const diff = /^rewind:\/\/sessions\/([^/]+)\/points\/([^/]+)\/diff$/.exec(uri)
    const body = async () => {
      if (timeline !== null) {
        const sessionId = decodeURIComponent(timeline[1]!)
        return {
          sessionId,
          transcript: await run("transcript", [sessionId], extra.signal),
          points: await run("listPoints", [sessionId], extra.signal),
        }
      }
      if (diff !== null) {
        return run(
          "diffPoint",
          [decodeURIComponent(diff[1]!), decodeURIComponent(diff[2]!), { patches: true }],
          extra.signal,
        )
      }
      throw new Error(`unknown resource ${uri}: see resources/templates/list`)
    }
    try {
      return {
        contents: [{ uri, mimeType: "application/json", text: JSON.stringify(await body(), null, 2) }],
      }
    } catch (error) {
      if (error instanceof ToolRefused) throw new Error(`${error.kind}: ${error.message}`)
      throw error
    }
  })

  return server
}
