/**
 * What each MCP tool does: the operations it calls, and the tokens that guard the destructive
 * ones. Invariants: a destructive tool runs only with a token that a preview of THIS server issued
 * for the same session and target, and only once (a token from elsewhere is refused before the
 * engine is called); a session left out is the most recently created; a refusal is a
 * `ToolRefused`, which the server answers as a tool result, never a protocol error.
 */
import { randomBytes } from "node:crypto"
import { Effect } from "effect"
import type { Outcome, ServedMethod } from "../server/rpcServer.js"
import type { inputs, ToolName } from "./mcpToolSpecs.js"

/** The operations this server uses, by their names in the operation table. */
export type McpOperations = Readonly<
  Record<
    | "listSessions"
    | "listPoints"
    | "listRewindPoints"
    | "diffPoint"
    | "previewPointRestore"
    | "turnRestoreTarget"
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

export class ToolRefused {
  constructor(
    readonly kind: string,
    readonly message: string,
  ) {}
}

/**
 * The tool handlers over the operations, and `run`, which calls an operation and turns its refusal
 * into a `ToolRefused`. A destructive tool redeems, once, a token a preview of this same handler
 * set issued for the same target.
 */
export const makeToolHandlers = (ops: McpOperations) => {
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
    preview_turn_restore: async (input, signal) => {
      const sessionId = await sessionOf(input.sessionId, signal)
      const target = (await run("turnRestoreTarget", [sessionId, input.turnId], signal)) as {
        pointId: string
      }
      const preview = (await run("previewPointRestore", [sessionId, target.pointId], signal)) as {
        token?: string
        canApply: boolean
      }
      if (preview.token !== undefined) issue("restore", `${sessionId} ${target.pointId}`, preview.token)
      return { sessionId, target, ...preview }
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

  return { run, handlers }
}
