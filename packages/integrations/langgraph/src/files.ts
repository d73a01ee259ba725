/**
 * Files follow the graph (`@rewind/langgraph/files`): an optional bridge between a LangGraph graph
 * whose nodes edit files and Rewind's workspace points, through the `rewind` facade's public API.
 *
 * How the two are tied: after a file-editing node runs, the bridge captures a Rewind point of the
 * workspace (in the thread's own Rewind session, one turn per capture) and adds the point's id to
 * the node's state update, under one channel (`rewindPoint` unless named otherwise). LangGraph then
 * keeps that id in every checkpoint it saves from there on, so any past graph checkpoint names
 * the workspace as it was at that checkpoint, whichever saver the graph uses. `begin` captures the
 * workspace before the graph runs, for the input state.
 *
 * Going back (time travel, a fork from a past checkpoint): `preview` lists what restoring the
 * workspace to that checkpoint's point would write and delete, with a token when it can be applied;
 * `restore` redeems the token (Rewind takes a rescue point of everything it touches first), and
 * `previewUndo` / `undo` are the redo: they restore that rescue point the same way, with a token of
 * their own (the facade's `redo` covers file rewinds, not point restores). Like any point restore,
 * it writes the files the point records and deletes only those it records as deleted: a file
 * created after the checkpoint, which its point does not record, is left alone. Nothing is written without a
 * preview's token; every refusal is the facade's `Outcome`.
 */
import type { RunnableConfig } from "@langchain/core/runnables"
import type { Outcome, PointId, RefusalKind, SessionId, TurnId } from "@rewind/contracts"
import type { PointRestorePreview, PointRestoreResult } from "@rewind/core"
import type { Rewind } from "rewind"
import { threadDigest } from "./internal/threadDigest.js"

export interface GraphFilesOptions {
  /** An open facade over the workspace the graph's nodes edit (`openRewind({ workspaceRoot })`). */
  readonly rewind: Rewind
  /** The state channel that carries the point id (declare it in the graph's state). */
  readonly channel?: string
}

export interface GraphFilesPreview {
  readonly threadId: string
  readonly pointId: PointId
  readonly preview: PointRestorePreview
}

export interface GraphFilesRestore {
  readonly threadId: string
  readonly pointId: PointId
  readonly result: PointRestoreResult
}

const refused = <A>(kind: RefusalKind, message: string): Outcome<A> => ({
  ok: false,
  refusal: { kind, message },
})

export class GraphFiles {
  readonly channel: string
  private readonly rewind: Rewind
  private readonly sessions = new Map<string, Promise<SessionId>>()
  /** The rescue point of the last restore per thread, for `undo`. */
  private readonly rescues = new Map<string, PointId>()

  constructor(options: GraphFilesOptions) {
    this.rewind = options.rewind
    this.channel = options.channel ?? "rewindPoint"
  }

  /** The Rewind session that holds a thread's points (created on first use). */
  sessionOf(threadId: string): Promise<SessionId> {
    let known = this.sessions.get(threadId)
    if (known === undefined) {
      known = this.openSession(threadId)
      this.sessions.set(threadId, known)
      known.catch(() => this.sessions.delete(threadId))
    }
    return known
  }

  private async openSession(threadId: string): Promise<SessionId> {
    const digest = threadDigest(threadId)
    const sessionId = `lgf-${digest}` as SessionId
    const created = await this.rewind.createSession({
      sessionId,
      title: `LangGraph files of thread ${threadId.slice(0, 80)}`,
      cwd: this.rewind.workspaceRoot,
    })
    // A session made by an earlier run (or another worker) is the one to use.
    if (!created.ok && created.refusal.kind !== "conflict") throw new Error(created.refusal.message)
    return sessionId
  }

  /**
   * Captures the workspace for the thread now and answers the state update that ties it to the
   * graph (`{ [channel]: pointId }`). Rejects when no point could be captured: a node that cannot
   * be restored later should not look as if it could.
   */
  async capture(threadId: string, label: string): Promise<Record<string, string>> {
    const sessionId = await this.sessionOf(threadId)
    const started = await this.rewind.appendUserMessage(sessionId, { text: `graph step: ${label}` })
    if (!started.ok) throw new Error(started.refusal.message)
    const turnId: TurnId = started.value.turnId
    const captured = await this.rewind.capturePoint(sessionId, turnId)
    await this.rewind.completeTurn(sessionId, turnId)
    if (!captured.ok) throw new Error(`no workspace point for ${label}: ${captured.refusal.message}`)
    if (captured.value._tag === "NotCaptured")
      throw new Error(`no workspace point for ${label}: ${captured.value.reason}`)
    return { [this.channel]: captured.value.point.pointId }
  }

  /** The workspace before the graph runs: merge the answer into the graph's input. */
  begin(threadId: string): Promise<Record<string, string>> {
    return this.capture(threadId, "start")
  }

  /**
   * Wraps a node that edits files: runs it, then captures the workspace and adds the point to the
   * node's update.
   */
  node<S, U extends object>(
    name: string,
    fn: (state: S, config: RunnableConfig) => U | Promise<U>,
  ): (state: S, config: RunnableConfig) => Promise<U & Record<string, string>> {
    return async (state, config) => {
      const update = await fn(state, config)
      const threadId = config?.configurable?.thread_id
      if (typeof threadId !== "string" || threadId === "")
        throw new Error(`node ${name}: the graph runs without a thread_id, so its files cannot be tied to it`)
      return { ...update, ...(await this.capture(threadId, name)) }
    }
  }

  private pointOf(values: Record<string, unknown> | undefined): PointId | undefined {
    const id = values?.[this.channel]
    return typeof id === "string" && id !== "" ? (id as PointId) : undefined
  }

  /**
   * What restoring the workspace to a graph checkpoint would do. `values` is that checkpoint's
   * state (a `StateSnapshot`'s `values`, or a checkpoint tuple's channel values).
   */
  async preview(threadId: string, values: Record<string, unknown>): Promise<Outcome<GraphFilesPreview>> {
    const pointId = this.pointOf(values)
    if (pointId === undefined)
      return refused(
        "not_found",
        `this graph checkpoint has no workspace point (no "${this.channel}" in its state): it was saved before any file step and without begin()`,
      )
    const sessionId = await this.sessionOf(threadId)
    const preview = await this.rewind.previewPointRestore(sessionId, pointId)
    return preview.ok ? { ok: true, value: { threadId, pointId, preview: preview.value } } : preview
  }

  /**
   * Restores the workspace to a graph checkpoint, redeeming `preview`'s token. Rewind captures a
   * rescue point first; `undo` goes back to it.
   */
  async restore(
    threadId: string,
    values: Record<string, unknown>,
    token: string,
  ): Promise<Outcome<GraphFilesRestore>> {
    const pointId = this.pointOf(values)
    if (pointId === undefined) return refused("not_found", `this graph checkpoint has no workspace point`)
    if (typeof token !== "string" || token === "")
      return refused("invalid_input", "restore needs the token of a preview (call preview first)")
    const sessionId = await this.sessionOf(threadId)
    const restored = await this.rewind.restorePoint(sessionId, pointId, token)
    if (!restored.ok) return restored
    this.rescues.set(threadId, restored.value.rescuePointId)
    return { ok: true, value: { threadId, pointId, result: restored.value } }
  }

  /** Previews putting back what the thread's last `restore` replaced (its rescue point). */
  async previewUndo(threadId: string): Promise<Outcome<GraphFilesPreview>> {
    const pointId = this.rescues.get(threadId)
    if (pointId === undefined) return refused("nothing_to_undo", `no restore of thread ${threadId} to undo`)
    return this.preview(threadId, { [this.channel]: pointId })
  }

  /** Puts back what the thread's last `restore` replaced, redeeming `previewUndo`'s token. */
  async undo(threadId: string, token: string): Promise<Outcome<GraphFilesRestore>> {
    const pointId = this.rescues.get(threadId)
    if (pointId === undefined) return refused("nothing_to_undo", `no restore of thread ${threadId} to undo`)
    return this.restore(threadId, { [this.channel]: pointId }, token)
  }
}
