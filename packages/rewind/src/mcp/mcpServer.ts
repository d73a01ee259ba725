/**
 * `rewind mcp`: a Model Context Protocol server (the official SDK) for agents that call tools
 * themselves. A small, safe projection of the operation table, picked by name: list checkpoints
 * and points, diff, preview a restore (to a point, or to before a turn), restore with the
 * preview's token, redo, capture now,
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
import { Server } from "@modelcontextprotocol/sdk/server/index.js"
import {
  CallToolRequestSchema,
  type CallToolResult,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema,
  ReadResourceRequestSchema,
} from "@modelcontextprotocol/sdk/types.js"
import { Either, ParseResult, Schema } from "effect"

import { type McpOperations, makeToolHandlers, ToolRefused } from "./mcpToolHandlers.js"
import { inputSchemaOf, inputs, type ToolName, tools } from "./mcpToolSpecs.js"

export type { McpOperations } from "./mcpToolHandlers.js"

const text = (value: unknown): CallToolResult => ({
  content: [{ type: "text", text: JSON.stringify(value, null, 2) }],
})

const refusal = (message: string, kind = "invalid_input"): CallToolResult => ({
  content: [{ type: "text", text: `${kind}: ${message}` }],
  isError: true,
})

/** Builds the MCP server over the operations. */
export const makeMcpServer = (ops: McpOperations, info: { readonly version: string }) => {
  const { run, handlers } = makeToolHandlers(ops)

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
