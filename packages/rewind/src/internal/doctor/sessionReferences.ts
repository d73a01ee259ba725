/**
 * Doctor's references step: every session stream is read (one that no longer decodes is a
 * problem), its parent must be in the store, and every blob its events need must be there:
 * checkpoints' before/after/patch content, points' manifests and the files they list, the newest
 * turn point's stat cache, write intents' pre-images.
 *
 * What is live follows the collector (core's pointGc.ts): each session's newest point of each kind
 * and its newest stat cache whatever retention a cleanup used. An older point some of whose content
 * is gone was released by retention (or lost): it is counted in `releasedPoints`, not reported (see
 * the module comment of `../doctor.ts`); its manifest missing is still a problem.
 */
import type { ContentHash, PointCaptured, SessionId, StoredEvent } from "@rewind/contracts"
import { loadManifest, manifestBlobs, SessionStore } from "@rewind/core"
import { Effect, Either } from "effect"
import { type Findings, versionHash } from "./findings.js"

/** Manifests read so far (an unchanged workspace reuses the previous one: each is read once). */
interface Manifests {
  readonly content: Map<ContentHash, ReadonlyArray<ContentHash> | "unreadable">
  /** Manifests whose files were already followed. */
  readonly followed: Set<ContentHash>
  releasedPoints: number
}

export interface SessionReferences {
  readonly sessions: number
  /** Every session id in the store, for the journal step's ownership check. */
  readonly known: ReadonlySet<SessionId>
  readonly releasedPoints: number
}

const manifestContent = (findings: Findings, manifests: Manifests, hash: ContentHash, from: string) =>
  Effect.gen(function* () {
    const known = manifests.content.get(hash)
    if (known !== undefined) return known
    const manifest = yield* Effect.either(loadManifest(hash))
    const content = Either.isLeft(manifest) ? ("unreadable" as const) : [...manifestBlobs(manifest.right)]
    if (Either.isLeft(manifest))
      findings.problem("manifest_unreadable", hash, `${from}: ${manifest.left.message}`)
    manifests.content.set(hash, content)
    return content
  })

const pointReferences = (
  findings: Findings,
  manifests: Manifests,
  event: PointCaptured,
  from: string,
  live: { readonly point: boolean; readonly statCache: boolean },
) =>
  Effect.gen(function* () {
    findings.needBlob(event.manifestHash, from)
    if (live.statCache) findings.needBlob(event.statCacheHash, from)
    if (!findings.verified.has(event.manifestHash)) return
    const content = yield* manifestContent(findings, manifests, event.manifestHash, from)
    if (content === "unreadable") return
    if (!live.point && content.some((hash) => findings.isMissing(hash))) {
      // Released by retention (or lost): its content is not required.
      manifests.releasedPoints++
      findings.references += content.length
      return
    }
    if (manifests.followed.has(event.manifestHash)) return
    manifests.followed.add(event.manifestHash)
    for (const hash of content) findings.needBlob(hash, `the manifest of ${from}`)
  })

const eventReferences = (
  findings: Findings,
  manifests: Manifests,
  sessionId: SessionId,
  events: ReadonlyArray<StoredEvent>,
) =>
  Effect.gen(function* () {
    // The newest point of each kind and the newest turn point's stat cache are live.
    const newestOfKind = new Map<string, string>()
    let latestStatCache: ContentHash | undefined
    for (const { event } of events) {
      if (event._tag !== "PointCaptured") continue
      newestOfKind.set(event.kind, event.pointId)
      if (event.kind === "turn") latestStatCache = event.statCacheHash
    }
    for (const { event } of events) {
      if (event._tag === "CheckpointCreated") {
        const c = event.checkpoint
        const from = `checkpoint ${c.checkpointId} of session ${sessionId}`
        findings.needBlob(versionHash(c.before), from)
        findings.needBlob(versionHash(c.after), from)
        findings.needBlob(c.patchHash, from)
      } else if (event._tag === "PointCaptured") {
        yield* pointReferences(findings, manifests, event, `point ${event.pointId} of session ${sessionId}`, {
          point: newestOfKind.get(event.kind) === event.pointId,
          statCache: event.statCacheHash === latestStatCache,
        })
      } else if (event._tag === "WriteIntentDeclared") {
        for (const e of event.entries) {
          if (e.preImage.state === "file")
            findings.needBlob(e.preImage.hash, `a write intent of session ${sessionId}`)
        }
      }
    }
  })

export const checkSessionReferences = (findings: Findings) =>
  Effect.gen(function* () {
    const store = yield* SessionStore
    const listed = yield* Effect.either(store.listSessions())
    if (Either.isLeft(listed)) {
      findings.problem(
        "stream_unreadable",
        "sessions",
        `the sessions cannot be listed: ${listed.left.message}`,
      )
    }
    const sessions = Either.getOrElse(listed, () => [])
    const known = new Set<SessionId>(sessions.map((s) => s.sessionId))
    const manifests: Manifests = { content: new Map(), followed: new Set(), releasedPoints: 0 }
    for (const session of sessions) {
      if (session.parentId !== undefined) {
        findings.references++
        if (!known.has(session.parentId)) {
          findings.problem(
            "missing_parent",
            session.sessionId,
            `session ${session.sessionId} names ${session.parentId} as its parent, which is not in the store`,
          )
        }
      }
      const events = yield* Effect.either(store.read(session.sessionId))
      if (Either.isLeft(events)) {
        findings.problem(
          "stream_unreadable",
          session.sessionId,
          `the events of session ${session.sessionId} cannot be read: ${events.left.message}`,
        )
        continue
      }
      yield* eventReferences(findings, manifests, session.sessionId, events.right)
    }
    return {
      sessions: sessions.length,
      known,
      releasedPoints: manifests.releasedPoints,
    } satisfies SessionReferences
  })
