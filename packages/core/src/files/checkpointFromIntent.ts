/**
 * A checkpoint from a write intent: the two halves of a tool call that reports no content of its
 * own (an agent's hook sees the tool before and after it runs, in two processes that share only
 * the store). Before the tool runs the host declares a write intent (snapshot/writeIntents.ts:
 * the engine stores the pre-image); after it, this records the checkpoint with that pre-image as
 * the before-content and what the file holds now as the after-content.
 *
 * Invariants:
 * - the before-content is the pre-image of intent `intentId` for the path, else the newest intent
 *   of the same turn naming the path (`<turnId>.pre.` prefix), never an older turn's;
 * - a path with no such pre-image, or whose pre-image was a link or unreadable, records nothing
 *   and says why (a warning, like every problem of `recordFileMutation`: the tool already ran);
 * - the recording itself is `recordFileMutation`'s, with its protection checks and warnings;
 * - `expected` (what the tool says it wrote, expectedAfter.ts) only lets the read of the
 *   after-content skip the settle wait when it finds exactly those bytes: the after-content
 *   recorded is always what the read found.
 */
import type { PreImage, SessionId, TurnId, WorkspacePath, WriteIntentDeclared } from "@rewind/contracts"
import { Effect, Either, Option } from "effect"
import { ArtifactStore } from "../ports/ArtifactStore.js"
import { Workspace } from "../ports/Workspace.js"
import { loadSession } from "../session/loadSession.js"
import { type ExpectedAfter, expectedAfterContent } from "./expectedAfter.js"
import { type FileMutationResult, recordFileMutation } from "./recordFileMutation.js"

export interface CheckpointFromIntentInput {
  readonly sessionId: SessionId
  /** The turn the checkpoint belongs to. */
  readonly turnId: TurnId
  /** The write intent declared before the tool ran (its `turnId`). */
  readonly intentId: TurnId
  readonly path: WorkspacePath
  readonly toolName: string
  /** What the tool says the file now holds (Write's content, Edit's edits); a hint for the read. */
  readonly expected?: ExpectedAfter
}

/** The mark between a turn id and its intents' suffix: intents of turn T are named `T.pre.<key>`. */
export const INTENT_MARK = ".pre."

const findPreImage = (
  intents: ReadonlyArray<WriteIntentDeclared>,
  turnId: TurnId,
  intentId: TurnId,
  path: WorkspacePath,
): PreImage | undefined => {
  const entryOf = (intent: WriteIntentDeclared) => intent.entries.find((e) => e.path === path)?.preImage
  const exact = intents.findLast((i) => i.turnId === intentId && entryOf(i) !== undefined)
  if (exact !== undefined) return entryOf(exact)
  const ofTurn = intents.findLast(
    (i) => i.turnId.startsWith(`${turnId}${INTENT_MARK}`) && entryOf(i) !== undefined,
  )
  return ofTurn === undefined ? undefined : entryOf(ofTurn)
}

const warning = (reason: "intent_not_found" | "invalid_input" | "unchanged", message: string) =>
  ({ recorded: false, warning: { reason, message } }) satisfies FileMutationResult

/** Records the checkpoint of `path` from its write intent; never fails for a recording problem. */
export const recordCheckpointFromIntent = (input: CheckpointFromIntentInput) =>
  Effect.gen(function* () {
    const { sessionId, turnId, intentId, path, toolName } = input
    const state = yield* loadSession(sessionId)
    const preImage = findPreImage(state.writeIntents, turnId, intentId, path)
    if (preImage === undefined) {
      return warning(
        "intent_not_found",
        `no before-content of ${path} was stored (no write intent named it before the tool ran); no checkpoint`,
      )
    }
    if (preImage.state === "link" || preImage.state === "unreadable") {
      const was = preImage.state === "link" ? "a symbolic link" : `unreadable (${preImage.detail})`
      return warning("invalid_input", `${path} was ${was} before the tool ran; no checkpoint`)
    }
    const artifacts = yield* ArtifactStore
    const before = preImage.state === "absent" ? null : yield* artifacts.get(preImage.hash)
    // A file the tool left unreadable has no after-content to record: said, not thrown.
    const hint = expectedAfterContent(input.expected, before)
    const now = yield* Effect.either(
      Effect.flatMap(Workspace, (w) => w.read(path, hint === undefined ? undefined : { expected: hint })),
    )
    if (Either.isLeft(now)) {
      return warning("invalid_input", `${path} cannot be read after the tool ran (${now.left.message})`)
    }
    const after = Option.match(now.right, { onNone: () => null, onSome: (f) => f.content })
    if (before === null && after === null) {
      return warning("unchanged", `${path} did not exist before the tool ran, nor after`)
    }
    return yield* recordFileMutation({
      sessionId,
      turnId,
      path,
      toolName,
      before,
      after,
      ...(preImage.state === "file" ? { beforeMode: preImage.mode } : {}),
      ...(Option.isSome(now.right) ? { afterMode: now.right.value.mode } : {}),
    })
  })
