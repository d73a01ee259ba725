/**
 * A deliberately naive reference model of one session's conversation: the active branch is a plain
 * array that a rewind truncates. It shares no code with core (no cursor, no kept prefix), so when
 * the two agree over random command sequences, the cursor-based implementation is doing the same
 * thing as the obvious one.
 */
import type { RefusalKind } from "@rewind/contracts"

export type ModelRole = "user" | "assistant" | "system" | "summary"

export interface ModelTask {
  readonly turn: string
  readonly refuses: boolean
  readonly generation: number
  status: "running" | "completed" | "failed" | "stopped"
}

export type Prediction<A = void> =
  | { readonly ok: true; readonly value: A }
  | { readonly ok: false; readonly kind: RefusalKind }

export class SessionModel {
  /** Every message ever appended, in order. */
  readonly all: Array<string> = []
  active: Array<string> = []
  readonly role = new Map<string, ModelRole>()
  readonly turnOf = new Map<string, string>()
  readonly userOfTurn = new Map<string, string>()
  readonly compactions: Array<{ summary: string; from: string; to: string }> = []
  readonly tasks = new Map<string, ModelTask>()
  readonly everCut = new Set<string>()
  generation = 0

  append(id: string, role: ModelRole, turn: string): void {
    this.all.push(id)
    this.active.push(id)
    this.role.set(id, role)
    this.turnOf.set(id, turn)
    if (role === "user") this.userOfTurn.set(turn, id)
  }

  lastActiveTurn(): string | undefined {
    for (let i = this.active.length - 1; i >= 0; i--) {
      const id = this.active[i]!
      if (this.role.get(id) === "user") return this.turnOf.get(id)
    }
    return undefined
  }

  /** Compactions whose summary and both ends are on the active branch, in order. */
  private liveCompactions() {
    const pos = new Map(this.active.map((id, i) => [id, i]))
    return this.compactions.filter((c) => {
      const f = pos.get(c.from)
      const t = pos.get(c.to)
      return pos.has(c.summary) && f !== undefined && t !== undefined && f <= t
    })
  }

  covered(): Set<string> {
    const pos = new Map(this.active.map((id, i) => [id, i]))
    const out = new Set<string>()
    for (const c of this.liveCompactions()) {
      for (let i = pos.get(c.from)!; i <= pos.get(c.to)!; i++) out.add(this.active[i]!)
    }
    return out
  }

  modelHistory(): Array<string> {
    const covered = this.covered()
    return this.active.filter((id) => !covered.has(id))
  }

  predictCompaction(fromIndex: number, toIndex: number): Prediction {
    const covered = this.covered()
    for (let i = fromIndex; i <= toIndex; i++) {
      const id = this.active[i]!
      if (this.role.get(id) === "summary" || covered.has(id)) return { ok: false, kind: "invalid_input" }
    }
    return { ok: true, value: undefined }
  }

  compact(summary: string, from: string, to: string): void {
    this.append(summary, "summary", this.turnOf.get(to)!)
    this.compactions.push({ summary, from, to })
  }

  /** What a conversation rewind to `id` must do, computed the obvious way. */
  predictRewind(
    id: string,
    scope: "conversation" | "both",
  ): Prediction<{ target: string; stops: Array<string> }> {
    const role = this.role.get(id)
    if (role === undefined) return { ok: false, kind: "not_found" }
    if (!this.active.includes(id)) return { ok: false, kind: "not_on_active_branch" }
    if (role === "summary") return { ok: false, kind: "summary_target" }
    let target = id
    if (role !== "user") {
      if (role !== "assistant" || scope !== "conversation") return { ok: false, kind: "not_a_user_message" }
      target = this.userOfTurn.get(this.turnOf.get(id)!)!
    }
    const cut = this.active.slice(this.active.indexOf(target))
    const cutTurns = new Set(cut.map((m) => this.turnOf.get(m)))
    const stops: Array<string> = []
    for (const [taskId, task] of this.tasks) {
      if (task.status !== "running" || !cutTurns.has(task.turn)) continue
      if (task.refuses) return { ok: false, kind: "task_not_stopped" }
      stops.push(taskId)
    }
    return { ok: true, value: { target, stops } }
  }

  rewind(target: string, stops: ReadonlyArray<string>): void {
    const at = this.active.indexOf(target)
    for (const id of this.active.slice(at)) this.everCut.add(id)
    this.active = this.active.slice(0, at)
    for (const t of stops) this.tasks.get(t)!.status = "stopped"
    this.generation += 1
  }

  predictFinish(taskId: string): "accepted" | "already_finished" | "stale_generation" {
    const task = this.tasks.get(taskId)!
    if (task.status !== "running") return "already_finished"
    const onBranch = this.active.includes(this.userOfTurn.get(task.turn)!)
    if (task.generation < this.generation && !onBranch) return "stale_generation"
    return "accepted"
  }
}
