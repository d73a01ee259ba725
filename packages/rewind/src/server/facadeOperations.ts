/**
 * TEMPORARY adapter, deleted when the declared `Rewind` service and its `RewindOperations` table
 * land in `@rewind/core` (ops-contract.md): an operation table and an implementation of it built
 * from today's Promise facade (`openRewind`) and its per-method Schemas (`facadeParams`), so the
 * generic server (rpcServer.ts) and the MCP server run before that.
 *
 * What it cannot give and the real table will: `success` Schemas (every value goes out as plain
 * JSON here, `Schema.Unknown`), and `session` for calls that carry the session inside an input
 * object (`recordFileMutation`, `previewFileRewind`, `applyFileRewind`); those run unserialised,
 * which the store's version checks make safe, only not ordered.
 */
import { Refused } from "@rewind/contracts"
import { Effect, Either, Schema } from "effect"
import { type FacadeMethod, facadeParams } from "../internal/facadeInput.js"
import type { Rewind } from "../openRewind.js"
import type { Outcome, ServedOperation } from "./rpcServer.js"

type Access = ServedOperation["access"]

/** One sentence each, and what the call may do: read, write records, or change files / cut a branch. */
const described: { readonly [K in FacadeMethod]: readonly [access: Access, summary: string] } = {
  createSession: ["write", "Creates a session (its id is generated unless input.sessionId is given)."],
  listSessions: ["read", "Lists the sessions in the store, newest first."],
  appendUserMessage: ["write", "Appends a user message to the session and starts its turn."],
  appendReply: ["write", "Appends an assistant (or system) reply to a turn on the active branch."],
  completeTurn: ["write", "Marks a turn completed (or aborted) without pinning a fork boundary."],
  completeTurnWithBoundary: [
    "write",
    "Completes a turn and pins its fork boundary, so forkAtMessage can fork at its reply.",
  ],
  applyCompaction: ["write", "Replaces a contiguous range of the active branch by a summary for the model."],
  transcript: ["read", "The session's active branch as a person reads it."],
  recordFileMutation: ["write", "Records a checkpoint after a tool wrote a file (before and after content)."],
  turnFileChanges: ["read", "The file changes of a turn (default: the latest turn)."],
  evaluateRewindTarget: [
    "read",
    "Which rewinds a user message allows, and what each would undo; changes nothing.",
  ],
  rewindConversation: [
    "destructive",
    "Moves the conversation back to before a user message; files are untouched, nothing is deleted.",
  ],
  rewindToCheckpoint: ["destructive", "Puts back the before-content of one checkpoint's file."],
  rewindCode: ["destructive", "Restores the files to the latest live checkpoint tied to a user message."],
  rewindCascade: [
    "destructive",
    "Undoes everything from a user message onward: files, conversation, or both (scope).",
  ],
  previewFileRewind: [
    "read",
    "What undoing a turn's (or a message onward's) file changes would do, with a token for applyFileRewind; writes nothing.",
  ],
  applyFileRewind: [
    "destructive",
    "Applies a previewFileRewind preview after re-checking every file's hash.",
  ],
  forkAtMessage: ["write", "Forks the session at a completed turn's reply into a new session."],
  forkFromCheckpoint: [
    "destructive",
    "Forks the session and puts the workspace back to a checkpoint, the latest one, or the end of a message's turn.",
  ],
  listRewindPoints: [
    "read",
    "Rewind by fork, step 1: the user messages that can be rewound to, with their prompts.",
  ],
  previewRewindByFork: [
    "read",
    "Rewind by fork, step 2: what would be restored, checked, with a token when it can be applied.",
  ],
  rewindByFork: [
    "destructive",
    "Rewind by fork, step 3: forks, re-checks and restores the workspace, redeeming the preview's token.",
  ],
  cancelRewindByFork: ["write", "Cancels a rewind by fork: spends its token; nothing is forked or restored."],
  createSideChat: ["write", "Opens a side chat that inherits the conversation as background."],
  capturePoint: [
    "write",
    "Captures a point of the workspace for a turn (idempotent per turn); reports progress.",
  ],
  listPoints: ["read", "The session's points (turn and rescue points), oldest first."],
  diffPoint: [
    "read",
    "What differs between a point and the workspace now, with a unified diff per text file; writes nothing.",
  ],
  previewPointRestore: [
    "read",
    "What restoring a point would write and delete, its conflicts, and a token (5 minutes, single use) when it can be applied.",
  ],
  restorePoint: [
    "destructive",
    "Restores the workspace to a point, redeeming previewPointRestore's token; captures a rescue point first.",
  ],
  redo: [
    "destructive",
    "Undoes the session's last rewind that wrote files: files and conversation come back.",
  ],
  recover: [
    "read",
    "Operations a crash left incomplete (begun, never completed), oldest first, with each file's state.",
  ],
  resolveOperation: [
    "destructive",
    "Finishes an interrupted operation: continue writes what it meant to write, rollback what was there before.",
  ],
  snapshotStatus: ["read", "Store usage from the snapshot engine's side: blobs, bytes, points per session."],
  previewCleanup: ["read", "What garbage collection would delete; deletes nothing."],
  cleanup: [
    "destructive",
    "Garbage-collects the artifact store (unreferenced content older than the grace window).",
  ],
  doctor: [
    "read",
    "Checks the store (integrity, every blob's hash, every reference); repair: true removes orphan temp files only.",
  ],
}

/** Facade methods that answer a plain value (and reject a refusal) instead of an Outcome. */
const plain = new Set<FacadeMethod>([
  "listSessions",
  "recover",
  "snapshotStatus",
  "previewCleanup",
  "cleanup",
  "doctor",
  "recordFileMutation",
  "capturePoint",
])

const acceptsUndefined = (schema: Schema.Schema.AnyNoContext) =>
  Either.isRight(Schema.decodeUnknownEither(schema)(undefined))

const methods = Object.keys(facadeParams) as ReadonlyArray<FacadeMethod>

/** The operation table, in the shape of the core's `RewindOperations`. */
export const facadeOperations: { readonly [K in FacadeMethod]: ServedOperation } = Object.fromEntries(
  methods.map((name) => {
    const params: ReadonlyArray<readonly [string, Schema.Schema.AnyNoContext]> = facadeParams[name]
    const [access, summary] = described[name]
    const op: ServedOperation = {
      name,
      summary,
      access,
      success: Schema.Unknown,
      args: params.map(([argName, schema]) => ({
        name: argName,
        schema,
        ...(acceptsUndefined(schema) ? { optional: true } : {}),
      })),
      ...(params.some(([argName]) => argName === "sessionId") ? { session: "sessionId" } : {}),
      ...(name === "capturePoint" ? { progress: true } : {}),
    }
    return [name, op]
  }),
) as { readonly [K in FacadeMethod]: ServedOperation }

/**
 * The implementation over an open facade: each method an Effect whose interruption aborts the
 * facade call (its `signal`); refusals are Outcomes, other rejections the typed error.
 */
export const facadeImplementation = (rewind: Rewind) =>
  Object.fromEntries(
    methods.map((name) => {
      const arity = facadeParams[name].length
      const method = (...args: ReadonlyArray<unknown>): Effect.Effect<Outcome, unknown> =>
        Effect.tryPromise({
          try: (signal) => {
            const full = [...args]
            while (full.length < arity) full.push(undefined)
            full[arity - 1] = { ...((full[arity - 1] as object | undefined) ?? {}), signal }
            return (rewind[name] as (...a: ReadonlyArray<unknown>) => Promise<unknown>)(...full)
          },
          catch: (error) => error,
        }).pipe(
          Effect.map(
            (result): Outcome => (plain.has(name) ? { ok: true, value: result } : (result as Outcome)),
          ),
          Effect.catchIf(
            (error): error is Refused => error instanceof Refused,
            (error) => Effect.succeed<Outcome>({ ok: false, refusal: error.refusal }),
          ),
        )
      return [name, method]
    }),
  ) as { readonly [K in FacadeMethod]: (...args: ReadonlyArray<unknown>) => Effect.Effect<Outcome, unknown> }
