/**
 * An optional cache of folded session states. Streams are append-only, so a cached state stays a
 * correct prefix forever: loading reads only the events after its version and folds them on. Hosts
 * that run many commands on long sessions provide it (the Promise facade does); without it every
 * load folds the whole stream, which is what tests of cold loads want.
 */
import type { SessionId } from "@rewind/contracts"
import { Context, Layer } from "effect"
import { boundedMap } from "../internal/boundedMap.js"
import type { SessionState } from "./sessionState.js"

export interface SessionStateCacheService {
  readonly get: (sessionId: SessionId) => SessionState | undefined
  readonly set: (sessionId: SessionId, state: SessionState) => void
}

export class SessionStateCache extends Context.Tag("@rewind/core/SessionStateCache")<
  SessionStateCache,
  SessionStateCacheService
>() {}

/** A bounded cache keeping the most recently used `capacity` sessions. */
export const layerSessionStateCache = (capacity = 32): Layer.Layer<SessionStateCache> =>
  Layer.sync(SessionStateCache, () => {
    const entries = boundedMap<SessionId, SessionState>(capacity)
    return { get: entries.get, set: entries.set }
  })
