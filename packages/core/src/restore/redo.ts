/**
 * Redo: the one "undo a restore" of the engine. It brings back the state before a session's last
 * rewind or point restore (`restore --turn`, `restore <point>`, a merge, the UI's restore), from
 * its rescue versions. The redo entries of a session form a stack (the journal's `redoStack`,
 * newest first): each redo takes the newest entry, so a later restore is undone before an earlier
 * one. Every file must still hold what the restore wrote (its planned version); a file changed
 * since is listed in a `conflict` refusal and nothing is written. Otherwise the rescue versions are
 * written back as an operation of their own (durable, compensating), the symlinks the restore
 * changed (journaled beside the files) are put back as they were (except one leading out of the
 * root, which no restore makes: it is reported kept), and `RedoApplied` restores the
 * active branch exactly as it was before a rewind and makes the rewind's checkpoints undoable
 * again. A point restore's entry names no branch (it never moved the conversation), so its redo
 * leaves the conversation as it is, messages added since included. The journal consumes the redo
 * entry in the same write that completes the redo.
 */
import {
  type ContentHash,
  type FileVersion,
  type MessageId,
  type OperationId,
  type ProtectedPath,
  RedoApplied,
  type RedoConversation,
  refuse,
  type SessionId,
  type WorkspacePath,
} from "@rewind/contracts"
import { Effect, Either, Option } from "effect"
import { ArtifactStore } from "../ports/ArtifactStore.js"
import { IdGenerator } from "../ports/IdGenerator.js"
import { OperationJournal } from "../ports/OperationJournal.js"
import { SessionStore } from "../ports/SessionStore.js"
import { activeBranch } from "../session/activeBranch.js"
import { loadSession } from "../session/loadSession.js"
import { projectSession, type SessionState } from "../session/sessionState.js"
import { hashContent } from "../workspace/contentHash.js"
import { linkProtection } from "../workspace/protection.js"
import { runDurableRestore } from "./durableRestore.js"
import { linksNotAt } from "./journaledLinks.js"
import type { FileOutcome, PlannedWrite } from "./journaledWrites.js"
import { appendFresh } from "./restoreRecords.js"
import { readTarget } from "./targetRead.js"

export interface RedoResult {
  readonly operationId: OperationId
  /** The rewind or point restore this redo reversed. */
  readonly redoneOperationId: OperationId
  readonly files: ReadonlyArray<FileOutcome>
  /** Paths the redo could not have back and left as the restore made them (links leading out of the root). */
  readonly kept: ReadonlyArray<ProtectedPath>
  readonly activeBranch: ReadonlyArray<MessageId>
}

export interface ChangedSince {
  readonly path: WorkspacePath
  readonly expectedHash: ContentHash | null
  readonly currentHash: ContentHash | null
}

export const versionHash = (version: FileVersion): ContentHash | null =>
  version._tag === "present" ? version.hash : null

const versionMode = (version: FileVersion): number | undefined =>
  version._tag === "present" ? version.mode : undefined

/** The content a version names, verified by the artifact store; null for an absent file. */
export const loadFileVersion = (version: FileVersion) =>
  version._tag === "absent" ? Effect.succeed(null) : Effect.flatMap(ArtifactStore, (a) => a.get(version.hash))

const sameList = (a: ReadonlyArray<string>, b: ReadonlyArray<string>) =>
  a.length === b.length && a.every((x, i) => x === b[i])

/**
 * The active branch a redo entry brings back: the one the session's events up to `branchAtVersion`
 * give, or the branch itself for an intent written before versions were recorded (nothing to bring
 * back when it has neither).
 */
export const redoBranch = (sessionId: SessionId, conversation: RedoConversation) =>
  Effect.gen(function* () {
    if (conversation.activeBranch !== undefined) return conversation.activeBranch
    const version = conversation.branchAtVersion
    if (version === undefined) return []
    const events = yield* (yield* SessionStore).read(sessionId)
    return activeBranch(projectSession(events.filter((e) => e.sequence <= version)))
  })

/** The event that makes the active branch `branch` again on `state`, or nothing if it already is. */
export const restoreBranch = (state: SessionState, branch: ReadonlyArray<MessageId>) => {
  if (sameList(activeBranch(state), branch) || branch.length === 0) return undefined
  const last = state.messageOrder.at(-1)
  return {
    keptMessageIds: [...branch],
    ...(last === undefined ? {} : { branchCutAfterMessageId: last }),
    branchGeneration: state.branchGeneration + 1,
    targetMessageId: branch.at(-1)!,
    scope: "both" as const,
  }
}

/**
 * The outcome per path with the links the redo put back or took away: a link that came back where
 * the rewind had written a file was reported as that file's deletion, and a link taken away where
 * nothing is written was not reported at all.
 */
const withLinks = (
  files: ReadonlyArray<FileOutcome>,
  links: ReadonlyArray<{ readonly path: WorkspacePath; readonly planned: string | null }>,
): ReadonlyArray<FileOutcome> => {
  const byPath = new Map(files.map((f) => [f.path, f] as const))
  for (const link of links) {
    if (link.planned !== null) byPath.set(link.path, { path: link.path, action: "restored" })
    else if (!byPath.has(link.path)) byPath.set(link.path, { path: link.path, action: "deleted" })
  }
  return [...byPath.values()]
}

/** Undoes the session's last rewind (files and conversation) or point restore (files). */
export const redo = (sessionId: SessionId) =>
  Effect.gen(function* () {
    const journal = yield* OperationJournal
    const state = yield* loadSession(sessionId)
    const entry = (yield* journal.redoStack(sessionId))[0]
    if (entry === undefined || entry.intent.redo === undefined) {
      return yield* refuse("nothing_to_undo", `session ${sessionId} has no rewind or restore to redo`)
    }
    const intent = entry.intent
    const conversation = intent.redo!
    const branch = yield* redoBranch(sessionId, conversation)

    const links = intent.links ?? []
    const changed: Array<ChangedSince> = []
    // A path the rewind made a link holds no file now (its planned file version is absent): the
    // link check below stands for it.
    const linkedNow = new Set(links.flatMap((l) => (l.planned === null ? [] : [l.path])))
    for (const file of intent.files) {
      if (linkedNow.has(file.path) && file.planned._tag === "absent") continue
      const current = yield* Effect.either(readTarget(file.path))
      const currentHash = Either.isLeft(current)
        ? null
        : Option.match(current.right, { onNone: () => null, onSome: (f) => hashContent(f.content) })
      const expectedHash = versionHash(file.planned)
      if (Either.isLeft(current) || currentHash !== expectedHash) {
        changed.push({ path: file.path, expectedHash, currentHash })
      }
    }
    const relinked = yield* linksNotAt(links, "planned")
    if (changed.length > 0 || relinked.length > 0) {
      const paths = [...changed.map((c) => c.path), ...relinked.map((l) => l.path)]
      return yield* refuse(
        "conflict",
        `cannot redo: ${paths.join(", ")} changed since the ${intent.kind === "point_restore" ? "restore" : "rewind"} ${intent.operationId}; nothing was written`,
        {
          operationId: intent.operationId,
          files: paths,
          changed,
          ...(relinked.length === 0 ? {} : { links: relinked }),
        },
      )
    }

    // A link leading out of the root is one no restore makes (`linkProtection`): a redo entry
    // written before restores kept such links (they took them away) cannot have it back. The path
    // stays as the restore left it, file or link, and is reported kept; the rest is redone.
    const kept = links.flatMap((l) => {
      const found = l.rescue === null ? undefined : linkProtection(l.path, l.rescue)
      return found === undefined ? [] : [found]
    })
    const keptPaths = new Set(kept.map((k) => k.path))

    const writes: Array<PlannedWrite> = []
    for (const file of intent.files) {
      if (keptPaths.has(file.path)) continue
      const content = yield* Effect.either(loadFileVersion(file.rescue))
      if (Either.isLeft(content)) {
        return yield* refuse(
          "unavailable",
          `cannot redo: the rescue content of ${file.path} cannot be read (${content.left.message}); nothing was written`,
          { operationId: intent.operationId, path: file.path },
        )
      }
      // Nothing to write back only when content and mode are both as before (a point restore may
      // have changed a file's mode alone).
      if (
        versionHash(file.rescue) === versionHash(file.planned) &&
        versionMode(file.rescue) === versionMode(file.planned)
      )
        continue
      writes.push({
        path: file.path,
        content: content.right,
        expectedCurrentHash: versionHash(file.planned),
        ...(file.rescue._tag === "present" && file.rescue.mode !== undefined
          ? { mode: file.rescue.mode }
          : {}),
      })
    }

    const operationId = (yield* (yield* IdGenerator).next("op")) as OperationId
    // The journaled links run the other way: the rewind's are taken away before the files are
    // written back, the ones it removed come back at the commit (runDurableRestore does both).
    const reverse = links
      .filter((l) => !keptPaths.has(l.path))
      .map((l) => ({ path: l.path, rescue: l.planned, planned: l.rescue }))
    const record = (files: ReadonlyArray<FileOutcome>) =>
      appendFresh(
        sessionId,
        (fresh) => {
          const cursor = restoreBranch(fresh, branch)
          return Effect.succeed([
            new RedoApplied({
              operationId,
              redoneOperationId: intent.operationId,
              ...(cursor === undefined ? {} : { cursor }),
              unspentCheckpointIds: [...conversation.spentCheckpointIds],
              files: files.map((f) => f.path),
            }),
          ])
        },
        state,
      )
    const applied = yield* runDurableRestore(
      { sessionId, operationId, kind: "redo", writes, redoes: intent.operationId, links: reverse },
      record,
    )
    if (applied._tag === "RolledBack") {
      return yield* refuse(
        "unavailable",
        `the redo failed: ${applied.message}; every file already written was put back`,
        { operationId, step: applied.step, path: applied.path },
      )
    }
    return {
      operationId,
      redoneOperationId: intent.operationId,
      files: withLinks(applied.files, reverse),
      kept,
      activeBranch: activeBranch(applied.committed),
    } satisfies RedoResult
  })
