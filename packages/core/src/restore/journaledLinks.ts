/**
 * The symlink half of a journaled restore. File versions (`JournaledFile`) name contents, so a link
 * a restore removes, creates or retargets is journaled beside them as a `JournaledLink` (its target
 * before and after, null where there is none), and whoever undoes the operation (a redo, a
 * recovery) puts the links back from it exactly.
 *
 * Order, for either direction (`to` = "planned" applies, "rescue" undoes): links that are in the
 * way of the new state are removed first (so the file writes never meet a link), the files are
 * written, then the new state's links are created. Each removal checks that the link still points
 * where the journal says; the steps done are returned as undo effects so a caller can put them
 * back when a later step fails.
 */
import type { JournaledLink, WorkspacePath } from "@rewind/contracts"
import { Effect, Either, Option } from "effect"
import { Workspace } from "../ports/Workspace.js"
import { nothingCanBeThere } from "../workspace/pathAbsence.js"

type Side = "rescue" | "planned"

const other = (side: Side): Side => (side === "rescue" ? "planned" : "rescue")

/**
 * The link target at a path now: a string for a symlink, null for anything else or nothing (a
 * file or a link standing where a directory on the way should be leaves nothing at the path).
 */
export const linkAt = (path: WorkspacePath) =>
  Effect.gen(function* () {
    const workspace = yield* Workspace
    const stat = yield* Effect.catchIf(workspace.stat(path), nothingCanBeThere, () =>
      Effect.succeed(Option.none()),
    )
    if (Option.isNone(stat) || stat.value.kind !== "symlink") return null
    return yield* workspace.readLink(path)
  })

/** The links whose state now is not the journaled `side` (a link where none should be counts). */
export const linksNotAt = (links: ReadonlyArray<JournaledLink>, side: Side) =>
  Effect.gen(function* () {
    const wrong: Array<{
      readonly path: WorkspacePath
      readonly expected: string | null
      readonly actual: string | null
    }> = []
    for (const link of links) {
      const actual = yield* Effect.either(linkAt(link.path))
      const now = Either.isRight(actual) ? actual.right : undefined
      // A path that is expected to hold no link may hold a file (the file journal checks that).
      if (now === link[side] || (link[side] === null && now === null)) continue
      wrong.push({ path: link.path, expected: link[side], actual: now ?? null })
    }
    return wrong
  })

export type LinkUndo = Effect.Effect<void, unknown, Workspace>

/**
 * Removes the link at `path` after checking it still points to `expected` (never a removal of
 * something else that came to stand there: a file has no rescue here); the removal's undo goes to
 * `undo`. Fails with the path and `changed` when the link moved, or the delete's reason.
 */
const removeLink = (path: WorkspacePath, expected: string, changed: string, undo: Array<LinkUndo>) =>
  Effect.gen(function* () {
    const workspace = yield* Workspace
    const now = yield* Effect.either(linkAt(path))
    if (Either.isLeft(now) || now.right !== expected) return yield* Effect.fail({ path, message: changed })
    const removed = yield* Effect.either(workspace.delete(path))
    if (Either.isLeft(removed)) return yield* Effect.fail({ path, message: removed.left.message })
    undo.push(Effect.asVoid(workspace.symlink(path, expected)))
  })

/** Makes the link at `path` to `target`; its undo (the removal) goes to `undo`. */
const makeLink = (path: WorkspacePath, target: string, undo: Array<LinkUndo>) =>
  Effect.gen(function* () {
    const workspace = yield* Workspace
    const made = yield* Effect.either(workspace.symlink(path, target))
    if (Either.isLeft(made)) return yield* Effect.fail({ path, message: made.left.message })
    undo.push(Effect.asVoid(workspace.delete(path)))
  })

/**
 * Step one of moving to `to`: removes every link of the other side that `to` does not keep as it
 * is. Fails with the path and why on the first removal that does not go; what was removed is in
 * `undo`.
 */
export const removeLinksFor = (links: ReadonlyArray<JournaledLink>, to: Side, undo: Array<LinkUndo>) =>
  Effect.forEach(
    links,
    (link) => {
      const target = link[other(to)]
      return target === null || target === link[to]
        ? Effect.void
        : removeLink(
            link.path,
            target,
            `${link.path} is no longer the link to ${target} that was planned for`,
            undo,
          )
    },
    { discard: true },
  )

/**
 * Last step of moving to `to`: creates its links (after the files are written). Fails with the path
 * and why on the first link that cannot be made; what was made is in `undo`.
 */
export const createLinksFor = (links: ReadonlyArray<JournaledLink>, to: Side, undo: Array<LinkUndo>) =>
  Effect.forEach(
    links,
    (link) => {
      const target = link[to]
      return target === null || target === link[other(to)] ? Effect.void : makeLink(link.path, target, undo)
    },
    { discard: true },
  )

/** Runs undo steps newest first, each at most once, ignoring failures (best effort compensation). */
export const runLinkUndo = (undo: Array<LinkUndo>) =>
  Effect.suspend(() => {
    const steps = undo.splice(0).reverse()
    return Effect.forEach(steps, (u) => Effect.either(u), { discard: true })
  })

// ---- recovery: links of an interrupted operation, each in whatever state the crash left it ----

/**
 * `removed`: no link there, where both sides have one (a retarget cut between removing the old
 * link and making the new one); either resolution can make its side's link there.
 */
export type RecoveredLinkState = "rescue" | "planned" | "removed" | "changed" | "unreadable"

export interface RecoveredLink {
  readonly path: WorkspacePath
  readonly state: RecoveredLinkState
  /** The link's target now; null when no link is there (nothing, or a file). */
  readonly current: string | null
  readonly rescue: string | null
  readonly planned: string | null
}

/** Where each journaled link stands now: as before the operation, as after, or neither. */
export const inspectLinks = (links: ReadonlyArray<JournaledLink>) =>
  Effect.forEach(links, (link) =>
    Effect.map(Effect.either(linkAt(link.path)), (now): RecoveredLink => {
      if (Either.isLeft(now)) return { ...link, state: "unreadable", current: null }
      const current = now.right
      const state =
        current === link.planned
          ? "planned"
          : current === link.rescue
            ? "rescue"
            : current === null
              ? "removed"
              : "changed"
      return { ...link, state, current }
    }),
  )

/**
 * Recovery's first link step toward `to`: removes every link that is not `to`'s, after checking
 * it still points where `inspectLinks` saw it (so a link changed meanwhile is refused, not
 * removed). What was removed is in `undo`.
 */
export const removeRecoveredLinks = (links: ReadonlyArray<RecoveredLink>, to: Side, undo: Array<LinkUndo>) =>
  Effect.forEach(
    links,
    (link) =>
      link.current === null || link.current === link[to]
        ? Effect.void
        : removeLink(link.path, link.current, "the link changed while it was being recovered", undo),
    { discard: true },
  )

/** Recovery's last link step toward `to` (after the files): makes each of `to`'s links not there. */
export const createRecoveredLinks = (links: ReadonlyArray<RecoveredLink>, to: Side, undo: Array<LinkUndo>) =>
  Effect.forEach(
    links,
    (link) => {
      const target = link[to]
      return target === null || link.current === target ? Effect.void : makeLink(link.path, target, undo)
    },
    { discard: true },
  )
