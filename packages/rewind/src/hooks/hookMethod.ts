/**
 * The server's `hook` method: the hook client's one request per hook event. The client has read
 * the payload as JSON and found its workspace and store (hookInput.ts); the server applies the
 * agent's payload Schemas and acts on the event through its open Rewind's declared operations
 * (runHook.ts over `facadeHookEngine`), next to the engine, so a hook costs one round trip
 * however many operations its event takes.
 *
 * Invariants:
 * - a server acts only for its own (workspace, store): a call for another pair is refused
 *   (`invalid_input`) and records nothing (the client then runs the hook itself);
 * - it never records into a store that is gone: the open Rewind refuses every call once its store
 *   was removed or replaced (`StoreReplaced`, storeLayout.ts), this one first, and that failure
 *   stops the server (serveCommand.ts), so the client runs the hook itself and the next hook starts
 *   a server on the store as it is now;
 * - it answers a `HookRunResult` (never an error for the hook's own problems, which are in it and
 *   already in the problem log). It is declared beside `RewindOperations` in the server's table
 *   (serveCommand.ts), so `serve --schema` lists it, rather than in the core service: it needs the
 *   server's own store directory (the checks above) and acts through the open Rewind's facade.
 */
import { realpathSync } from "node:fs"
import { resolve } from "node:path"
import { Effect, Schema } from "effect"
import type { Rewind } from "../openRewind.js"
import type { ServedMethod, ServedOperation } from "../server/rpcServer.js"
import { facadeHookEngine } from "./hookEngine.js"
import type { ParsedHook } from "./hookInput.js"
import { runParsedHook } from "./runHook.js"

/** The method name the hook client calls. */
export const HOOK_METHOD = "hook"

const HookCall = Schema.Struct({
  agent: Schema.Literal("claude-code", "gemini-cli"),
  json: Schema.Unknown,
  workspaceRoot: Schema.String,
  storeDir: Schema.String,
  dir: Schema.optional(Schema.String),
  fallbackStoreDir: Schema.String,
})

const HookAnswer = Schema.Struct({
  stdout: Schema.String,
  problems: Schema.Array(Schema.String),
  handled: Schema.Boolean,
})

export const hookOperation: ServedOperation = {
  name: HOOK_METHOD,
  summary: "Act on one agent hook event (the hook client's request; see docs/hooks.md).",
  args: [{ name: "call", schema: HookCall }],
  success: HookAnswer,
  access: "write",
}

const real = (path: string) => {
  try {
    return realpathSync(path)
  } catch {
    return resolve(path)
  }
}

/** The `hook` method of a server whose open Rewind serves (`rewind.workspaceRoot`, `storeDir`). */
export const hookImplementation = (rewind: Rewind, storeDir: string): ServedMethod => {
  const root = real(rewind.workspaceRoot)
  const store = real(storeDir)
  return (call: typeof HookCall.Type) =>
    Effect.zipRight(
      // Nothing but the facade's own checks: a closed Rewind or a replaced store fails here.
      Effect.tryPromise({ try: () => rewind.run(Effect.void), catch: (error) => error }),
      Effect.promise(async () => {
        const { dir, ...rest } = call
        const parsed: ParsedHook = { ...rest, dir }
        if (real(parsed.workspaceRoot) !== root || real(parsed.storeDir) !== store) {
          return {
            ok: false,
            refusal: {
              kind: "invalid_input",
              message: `this server serves ${root} (store ${store}), not ${parsed.workspaceRoot} (store ${parsed.storeDir})`,
            },
          }
        }
        const value = await runParsedHook(parsed, async () => ({
          engine: facadeHookEngine(rewind),
          // The server's store stays open: it is closed when the server stops.
          close: async () => {},
        }))
        return { ok: true, value }
      }),
    )
}
