/**
 * Rewind by fork (DESIGN §7, the order a UI follows): instead of winding the session back in
 * place, the conversation before a user message is forked into a new child and the shared
 * workspace is put back to how it was when that message was sent; the host opens the child with
 * the message's original prompt refilled in its input box.
 *
 * 1. `listRewindPoints` (rewindByForkPlan.ts, with the plan itself): the user messages of the active branch that can be rewound to, each with
 *    its prompt and how many files it would put back.
 * 2. `previewRewindByFork`: the file change list, checked against the workspace (hashes and ignore
 *    rules) and, when it can be applied, a preview token scoped to the session and the message
 *    (five minutes, single use).
 * 3. `rewindByFork` (confirm): spends the token, forks the session, re-checks the workspace and
 *    ignore rules against what the preview showed, restores the files as one durable operation
 *    (rescue point, journal, compensation; the parent records it and can `redo` it), and answers
 *    with the child id and the prompt. `cancelRewindByFork` spends the token and does nothing else.
 *
 * The fork is committed before the re-check, as the UI order asks, so a re-check that finds the
 * workspace changed since the preview refuses with the child named in its details: the child then
 * holds the conversation only, and no file was written. The check is not a filesystem lock: a write
 * after the final check can still race the restore (each write re-checks its file's hash).
 */
import {
  type CommandId,
  type ForkWorkspace,
  type MessageId,
  type OperationId,
  refuse,
  type SessionId,
} from "@rewind/contracts"
import { Effect } from "effect"
import { IdGenerator } from "../ports/IdGenerator.js"
import { runDurableRestore } from "../restore/durableRestore.js"
import type { FileOutcome } from "../restore/journaledWrites.js"
import { checkPreviewToken, issuePreviewToken, redeemPreviewToken } from "../restore/previewTokens.js"
import {
  appendFresh,
  lastBranchTurn,
  type RewoundRecord,
  restoreNoticeEvents,
  workspaceRewound,
} from "../restore/restoreRecords.js"
import { branchView } from "../session/branchView.js"
import { loadSession } from "../session/loadSession.js"
import type { SessionState } from "../session/sessionState.js"
import { sha256Hex } from "../workspace/contentHash.js"
import { goalsForPrefix } from "./forkBundle.js"
import { type ForkOutcome, requireCommandId } from "./forkCommit.js"
import { commitForkedChild } from "./forkedChild.js"
import {
  checkForkRestore,
  type ForkRestoreFileCheck,
  type ForkRestoreUnsafeFile,
} from "./forkWorkspaceRestore.js"
import type { ForkRestoreFile } from "./forkWorkspaceRestoreService.js"
import { isolatedKey } from "./isolatedFork.js"
import { lastWrittenVersions } from "./planForkRestore.js"
import { planRewindByFork, type RewindByForkPlan } from "./rewindByForkPlan.js"

const targetOf = (messageId: MessageId) => `rewind-by-fork:message:${messageId}`

const digestOf = (
  messageId: MessageId,
  prefix: ReadonlyArray<MessageId>,
  files: ReadonlyArray<ForkRestoreFileCheck>,
) =>
  sha256Hex(
    JSON.stringify([
      messageId,
      prefix.length,
      prefix.at(-1) ?? null,
      [...files]
        .map((f) => [f.path, f.currentHash, f.targetHash])
        .sort((a, b) => String(a[0]).localeCompare(String(b[0]))),
    ]),
  )

const restoreFiles = (
  state: SessionState,
  plan: Extract<RewindByForkPlan, { ok: true }>,
): Array<ForkRestoreFile> => {
  const lastWritten = lastWrittenVersions(state)
  return plan.files.map((f) => ({ ...f, lastWritten: lastWritten.get(f.path) }))
}

/**
 * What preview and confirm both look at: the hash check, which applies the protection policy
 * (the store, `.git`, the ignore rules in force now) to every file.
 */
const checkWorkspace = (files: ReadonlyArray<ForkRestoreFile>) => checkForkRestore(files)

const requirePlan = (state: SessionState, messageId: MessageId) => {
  const plan = planRewindByFork(state, messageId)
  return plan.ok ? Effect.succeed(plan) : refuse(plan.kind, plan.message)
}

export interface RewindByForkPreview {
  readonly sessionId: SessionId
  readonly messageId: MessageId
  readonly prompt: string
  /** Messages the child will keep (the branch before the message). */
  readonly keptMessageCount: number
  readonly files: ReadonlyArray<ForkRestoreFileCheck>
  readonly unsafe: ReadonlyArray<ForkRestoreUnsafeFile>
  readonly canApply: boolean
  /** Present when `canApply`: confirm with it within five minutes. */
  readonly token?: string
  readonly tokenExpiresAt?: number
}

export interface RewindByForkInput {
  readonly sessionId: SessionId
  readonly messageId: MessageId
}

/** What rewinding to a user message by a fork would restore; writes nothing but the token. */
export const previewRewindByFork = (input: RewindByForkInput) =>
  Effect.gen(function* () {
    const state = yield* loadSession(input.sessionId)
    const plan = yield* requirePlan(state, input.messageId)
    const check = yield* checkWorkspace(restoreFiles(state, plan))
    const base: RewindByForkPreview = {
      sessionId: input.sessionId,
      messageId: input.messageId,
      prompt: plan.prompt,
      keptMessageCount: plan.prefix.length,
      files: check.files,
      unsafe: check.unsafe,
      canApply: check.canApply,
    }
    if (!check.canApply) return base
    const issued = yield* issuePreviewToken(
      input.sessionId,
      targetOf(input.messageId),
      digestOf(input.messageId, plan.prefix, check.files),
    )
    return { ...base, token: issued.token, tokenExpiresAt: issued.expiresAt } satisfies RewindByForkPreview
  })

/** Cancels a previewed rewind by fork: the token is spent, nothing is forked or restored. */
export const cancelRewindByFork = (input: RewindByForkInput & { readonly token: string }) =>
  Effect.as(redeemPreviewToken(input.sessionId, targetOf(input.messageId), input.token), {
    cancelled: true as const,
  })

export interface RewindByForkResult {
  readonly childSessionId: SessionId
  /** The original prompt of the message rewound to, for the host to refill its input box. */
  readonly prompt: string
  readonly fork: ForkOutcome
  /** Absent when no file needed writing (a conversation-only rewind by fork). */
  readonly operationId: OperationId | undefined
  readonly files: ReadonlyArray<FileOutcome>
}

export interface ConfirmRewindByForkInput extends RewindByForkInput {
  readonly token: string
  readonly commandId: CommandId
  /**
   * `shared` (the default): the parent's tree is put back. `isolated`: the parent's tree is left
   * alone and the child gets a tree of its own, as it stood just before the message.
   */
  readonly workspace?: ForkWorkspace | undefined
}

/**
 * Confirms a previewed rewind by fork: token, fork, re-check, restore, in that order. Refuses
 * (`token_invalid`, `token_expired`, `token_used`) before anything happens; after the fork, a
 * workspace that no longer matches the preview refuses (`unsafe_files` or `conflict`) with the
 * child's id in the details and no file written.
 */
export const rewindByFork = (input: ConfirmRewindByForkInput) =>
  Effect.gen(function* () {
    yield* requireCommandId(input.commandId)
    const target = targetOf(input.messageId)
    // The token first: nothing is looked at for a request that was never previewed.
    yield* checkPreviewToken(input.sessionId, target, input.token)
    const state = yield* loadSession(input.sessionId)
    const plan = yield* requirePlan(state, input.messageId)
    const running = [...state.turns.values()].find((t) => t.status === "running")
    if (input.workspace?.mode === "isolated") {
      // Nothing of the parent's tree is touched: the child's own tree is the state before the message.
      yield* redeemPreviewToken(input.sessionId, target, input.token)
      const fork = yield* commitForkedChild({
        parent: state,
        parentId: input.sessionId,
        prefix: plan.prefix,
        commandId: input.commandId,
        command: "rewind_by_fork",
        requestKey: `rewind_by_fork:message:${input.messageId}${isolatedKey(input.workspace)}`,
        forkKind: "message",
        goals: goalsForPrefix(state, plan.prefix),
        isolated: { workspace: input.workspace, boundary: { before: "message", messageId: input.messageId } },
      })
      return {
        childSessionId: fork.childSessionId,
        prompt: plan.prompt,
        fork,
        operationId: undefined,
        files: [],
      } satisfies RewindByForkResult
    }
    if (
      plan.files.length > 0 &&
      running !== undefined &&
      branchView(state).positions.has(running.userMessageId)
    ) {
      return yield* refuse(
        "busy",
        `session ${input.sessionId} is running turn ${running.id}; a rewind by fork rewrites files in the workspace it shares, so wait for the turn to end`,
      )
    }
    // Spent before the fork: of two confirms of one preview, only one forks.
    const issued = yield* redeemPreviewToken(input.sessionId, target, input.token)

    const fork = yield* commitForkedChild({
      parent: state,
      parentId: input.sessionId,
      prefix: plan.prefix,
      commandId: input.commandId,
      command: "rewind_by_fork",
      requestKey: `rewind_by_fork:message:${input.messageId}`,
      forkKind: "message",
      goals: goalsForPrefix(state, plan.prefix),
      restoredFiles: plan.files,
    })
    const childSessionId = fork.childSessionId

    const check = yield* checkWorkspace(restoreFiles(state, plan))
    if (!check.canApply) {
      return yield* refuse(
        "unsafe_files",
        `the workspace changed since the preview: ${check.unsafe.map((u) => `${u.path} (${u.reason})`).join(", ")}; no file was written. The fork ${childSessionId} was created with the conversation only`,
        { childSessionId, unsafe: check.unsafe, files: check.files },
      )
    }
    if (digestOf(input.messageId, plan.prefix, check.files) !== issued.planDigest) {
      return yield* refuse(
        "conflict",
        `the workspace changed since the preview; no file was written. The fork ${childSessionId} was created with the conversation only; preview again to restore files`,
        { childSessionId, files: check.files },
      )
    }
    if (check.writes.length === 0) {
      return {
        childSessionId,
        prompt: plan.prompt,
        fork,
        operationId: undefined,
        files: check.files.map((f) => ({ path: f.path, action: f.action })),
      } satisfies RewindByForkResult
    }

    const ids = yield* IdGenerator
    const operationId = (yield* ids.next("op")) as OperationId
    const files: ReadonlyArray<FileOutcome> = check.files.map((f) => ({ path: f.path, action: f.action }))
    const record: RewoundRecord = {
      operationId,
      scope: "workspace",
      targetMessageId: input.messageId,
      checkpointIds: plan.checkpointIds,
      files,
    }
    // The parent records the restore (its workspace, its checkpoints) and keeps the redo entry.
    const applied = yield* runDurableRestore(
      {
        sessionId: input.sessionId,
        operationId,
        kind: "fork_restore",
        writes: check.writes,
        redo: { branchAtVersion: state.version, spentCheckpointIds: [...plan.checkpointIds] },
      },
      () =>
        appendFresh(input.sessionId, (latest) =>
          Effect.map(
            restoreNoticeEvents(
              input.sessionId,
              lastBranchTurn(latest, state.messages.get(input.messageId)!.turnId),
              {
                operationId,
                checkpointIds: plan.checkpointIds,
                files,
              },
            ),
            (notice) => [workspaceRewound(record, "applied"), ...notice],
          ),
        ),
    )
    if (applied._tag === "RolledBack") {
      return yield* refuse(
        "unavailable",
        `the restore failed: ${applied.message}; every file already written was put back. The fork ${childSessionId} was created with the conversation only`,
        { childSessionId, operationId, step: applied.step, path: applied.path },
      )
    }
    return { childSessionId, prompt: plan.prompt, fork, operationId, files } satisfies RewindByForkResult
  })
