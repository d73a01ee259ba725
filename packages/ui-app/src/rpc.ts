/**
 * The app's only way to the engine: `call(method, params)` posts one JSON-RPC 2.0 request to the
 * server's `/rpc` (the same generic dispatch `rewind serve` runs over the declared `Rewind`
 * operations), with the launch token in the `X-Rewind-Token` header; and `useLiveVersion`, a
 * counter that moves whenever the server's `/events` stream says a session changed.
 *
 * Types come from the engine's own success Schemas (their encoded, wire side), imported as types
 * only: nothing of the engine is bundled into the app.
 */
import type { RewindResults } from "@rewind/core"
import type { Schema } from "effect"
import { useEffect, useState } from "preact/hooks"

type Wire<S extends Schema.Schema.Any> = Schema.Schema.Encoded<S>
type R = typeof RewindResults

export type SessionSummary = Wire<R["SessionSummary"]>
export type SessionHistory = Wire<R["SessionHistory"]>
export type HistoryEntry = SessionHistory["entries"][number]
export type Checkpoint = Wire<R["Checkpoint"]>
export type TurnFileChanges = Wire<R["TurnFileChanges"]>
export type FileRewindPreview = Wire<R["FileRewindPreview"]>
export type AppliedFileRewind = Wire<R["AppliedFileRewind"]>
export type PointDiff = Wire<R["PointDiff"]>
export type PointDiffEntry = PointDiff["entries"][number]
export type PointRestorePreview = Wire<R["PointRestorePreview"]>
export type PointRestoreResult = Wire<R["PointRestoreResult"]>
export type TurnRestoreTarget = Wire<R["TurnRestoreTarget"]>
export type RedoResult = Wire<R["RedoResult"]>
export type ForkOutcome = Wire<R["ForkOutcome"]>
export type SnapshotStatus = Wire<R["SnapshotStatus"]>
export type CleanupReport = Wire<R["CleanupReport"]>
export type IncompleteOperation = Wire<R["IncompleteOperation"]>
export type ResolvedOperation = Wire<R["ResolvedOperation"]>
export interface Point {
  readonly pointId: string
  readonly kind: string
  readonly turnId: string
  readonly files: number
  readonly bytes: number
  readonly capturedAt: number
}

export interface Refusal {
  readonly kind: string
  readonly message: string
  readonly details?: unknown
}

export type Outcome<A> =
  | { readonly ok: true; readonly value: A }
  | { readonly ok: false; readonly refusal: Refusal }

const token = document.querySelector<HTMLMetaElement>('meta[name="rewind-token"]')?.content ?? ""
let nextId = 1

/** One operation of the declared service; a JSON-RPC error is thrown, a refusal is a value. */
export const call = async <A>(method: string, params: ReadonlyArray<unknown>): Promise<Outcome<A>> => {
  const response = await fetch("/rpc", {
    method: "POST",
    headers: { "Content-Type": "application/json", "X-Rewind-Token": token },
    body: JSON.stringify({ jsonrpc: "2.0", id: nextId++, method, params }),
  })
  if (!response.ok) throw new Error(`${response.status}: ${await response.text()}`)
  const answer = (await response.json()) as { result?: Outcome<A>; error?: { code: number; message: string } }
  if (answer.error !== undefined) throw new Error(`${answer.error.code}: ${answer.error.message}`)
  return answer.result!
}

let changes = 0
let versions = new Map<string, number>()
const subscribers = new Set<() => void>()
let source: EventSource | undefined

/**
 * What moves when the store changed: with a session, that session's version (so a page reloads
 * only for its own session's writes); without, a count of every change.
 */
export const useLiveVersion = (sessionId?: string): string => {
  const read = () =>
    sessionId === undefined ? `all:${changes}` : `${sessionId}:${versions.get(sessionId) ?? -1}`
  const [version, setVersion] = useState(read)
  useEffect(() => {
    if (source === undefined) {
      source = new EventSource("/events")
      const update = (event: MessageEvent<string>) => {
        versions = new Map(JSON.parse(event.data) as Array<[string, number]>)
        changes++
        for (const s of subscribers) s()
      }
      source.addEventListener("hello", update)
      source.addEventListener("change", update)
    }
    const subscriber = () => setVersion(read())
    subscribers.add(subscriber)
    return () => {
      subscribers.delete(subscriber)
    }
  }, [sessionId])
  return version
}

/** Loads `load()` again whenever `deps` or the live version (of `sessionId`, if given) change; the last answer wins. */
export const useLoad = <A>(load: () => Promise<A>, deps: ReadonlyArray<unknown>, sessionId?: string) => {
  const live = useLiveVersion(sessionId)
  const [state, setState] = useState<{ value?: A; error?: string; loading: boolean }>({ loading: true })
  useEffect(() => {
    let current = true
    load().then(
      (value) => current && setState({ value, loading: false }),
      (error: unknown) => current && setState({ error: String(error), loading: false }),
    )
    return () => {
      current = false
    }
  }, [...deps, live])
  return state
}
