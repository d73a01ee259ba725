/**
 * A session's timeline: every message of its stream (the active branch, and the branches earlier
 * rewinds cut, greyed but readable, each under a "cut branch" header), compactions marked, each
 * turn's checkpoints and points, the session's background tasks, and the actions on the selected
 * message. The list is virtualised; ↑/↓ or j/k move the selection, Enter opens the turn's changes.
 */
import { useRef, useState } from "preact/hooks"
import { Link, useLocation } from "wouter-preact"
import { ForkButton, RedoButton, RestoreFlow } from "./actions.js"
import { Loading, RefusalView, when } from "./common.js"
import {
  type Checkpoint,
  call,
  type HistoryEntry,
  type Outcome,
  type Point,
  type SessionHistory,
  useLoad,
} from "./rpc.js"
import { useVirtualList } from "./useVirtualList.js"

const ROW = 52

type Row =
  | { readonly kind: "cut"; readonly segment: number; readonly count: number }
  | { readonly kind: "message"; readonly entry: HistoryEntry }

const textOf = (entry: HistoryEntry) =>
  entry.parts
    .map((p) => (p.kind === "text" ? (p.text ?? "") : `[${p.kind}${p.toolName ? ` ${p.toolName}` : ""}]`))
    .join(" ")

const rowsOf = (history: SessionHistory): ReadonlyArray<Row> => {
  const counts = new Map<number, number>()
  for (const e of history.entries) if (e.segment > 0) counts.set(e.segment, (counts.get(e.segment) ?? 0) + 1)
  const rows: Array<Row> = []
  let last = 0
  for (const entry of history.entries) {
    if (entry.segment > 0 && entry.segment !== last)
      rows.push({ kind: "cut", segment: entry.segment, count: counts.get(entry.segment) ?? 0 })
    last = entry.segment
    rows.push({ kind: "message", entry })
  }
  return rows
}

interface Data {
  readonly history: Outcome<SessionHistory>
  readonly checkpoints: ReadonlyArray<Checkpoint>
  readonly points: ReadonlyArray<Point>
}

const load = async (sessionId: string): Promise<Data> => {
  const [history, checkpoints, points] = await Promise.all([
    call<SessionHistory>("sessionHistory", [sessionId]),
    call<ReadonlyArray<Checkpoint>>("listCheckpoints", [sessionId]),
    call<ReadonlyArray<Point>>("listPoints", [sessionId]),
  ])
  return {
    history,
    checkpoints: checkpoints.ok ? checkpoints.value : [],
    points: points.ok ? points.value : [],
  }
}

/** The row a click landed on (each slot carries its index). */
const indexAt = (event: MouseEvent) => {
  const slot = (event.target as Element | null)?.closest("[data-index]")
  return slot === null || slot === undefined ? undefined : Number(slot.getAttribute("data-index"))
}

const MessageRow = ({
  entry,
  selected,
  checkpoints,
  point,
}: {
  entry: HistoryEntry
  selected: boolean
  checkpoints: number
  point: Point | undefined
}) => {
  const m = entry.message
  const classes = ["row", entry.active ? "active" : "cut", selected ? "selected" : "", `role-${m.role}`]
  return (
    <div class={classes.join(" ")} data-message={m.id} aria-selected={selected} role="option" tabIndex={-1}>
      <span class={`role role-${m.role}`}>{m.role}</span>
      <span class="text">{textOf(entry) || "(no text)"}</span>
      <span class="badges">
        {!entry.active && <span class="badge cut">cut {entry.segment}</span>}
        {m.role === "summary" && <span class="badge compaction">compaction summary</span>}
        {entry.compactedBy !== undefined && <span class="badge compaction">compacted</span>}
        {m.role === "user" && checkpoints > 0 && <span class="badge">{checkpoints} checkpoint(s)</span>}
        {m.role === "user" && point !== undefined && <span class="badge point">point</span>}
        {m.anchor !== undefined && <span class="badge">pinned</span>}
      </span>
    </div>
  )
}

const Timeline = ({ sessionId, data }: { sessionId: string; data: Data & { history: { ok: true } } }) => {
  const history = data.history.value
  const rows = rowsOf(history)
  const scroller = useRef<HTMLDivElement>(null)
  const list = useVirtualList(rows.length, ROW, () => scroller.current)
  const [selected, setSelected] = useState(0)
  const [, navigate] = useLocation()
  const checkpointsByTurn = new Map<string, number>()
  for (const c of data.checkpoints)
    checkpointsByTurn.set(c.turnId, (checkpointsByTurn.get(c.turnId) ?? 0) + 1)
  const pointByTurn = new Map(data.points.filter((p) => p.kind === "turn").map((p) => [p.turnId, p]))
  const current = rows[Math.min(selected, rows.length - 1)]
  const entry = current?.kind === "message" ? current.entry : undefined

  const move = (to: number) => {
    const next = Math.max(0, Math.min(rows.length - 1, to))
    setSelected(next)
    list.scrollToIndex(next, { align: "auto" })
  }
  const onKey = (event: KeyboardEvent) => {
    if (event.key === "ArrowDown" || event.key === "j") move(selected + 1)
    else if (event.key === "ArrowUp" || event.key === "k") move(selected - 1)
    else if (event.key === "Home") move(0)
    else if (event.key === "End") move(rows.length - 1)
    else if (event.key === "Enter" && entry !== undefined)
      navigate(`/s/${sessionId}/turn/${entry.message.turnId}`)
    else return
    event.preventDefault()
  }

  return (
    <div class="timeline-layout">
      <div
        class="timeline"
        ref={scroller}
        tabIndex={0}
        role="listbox"
        aria-label="timeline"
        aria-activedescendant={entry?.message.id}
        onKeyDown={onKey}
        onClick={(event) => {
          const i = indexAt(event)
          if (i !== undefined) setSelected(i)
        }}
        onDblClick={(event) => {
          const row = rows[indexAt(event) ?? -1]
          if (row?.kind === "message") navigate(`/s/${sessionId}/turn/${row.entry.message.turnId}`)
        }}
        data-testid="timeline"
      >
        <div style={{ height: `${list.getTotalSize()}px`, position: "relative" }}>
          {list.getVirtualItems().map((item) => {
            const row = rows[item.index]!
            return (
              <div
                key={item.key}
                class="slot"
                style={{ transform: `translateY(${item.start}px)`, height: `${ROW}px` }}
                data-index={item.index}
              >
                {row.kind === "cut" ? (
                  <div class={`row cut-header ${item.index === selected ? "selected" : ""}`}>
                    cut branch {row.segment}: {row.count} message(s) a rewind left behind
                  </div>
                ) : (
                  <MessageRow
                    entry={row.entry}
                    selected={item.index === selected}
                    checkpoints={checkpointsByTurn.get(row.entry.message.turnId) ?? 0}
                    point={pointByTurn.get(row.entry.message.turnId)}
                  />
                )}
              </div>
            )
          })}
        </div>
      </div>
      <aside class="detail">
        {entry === undefined ? (
          <p class="muted">Select a message (↑/↓ or j/k, Enter opens its turn).</p>
        ) : (
          <Selected sessionId={sessionId} entry={entry} point={pointByTurn.get(entry.message.turnId)} />
        )}
      </aside>
    </div>
  )
}

const Selected = ({
  sessionId,
  entry,
  point,
}: {
  sessionId: string
  entry: HistoryEntry
  point: Point | undefined
}) => {
  const m = entry.message
  return (
    <div>
      <h2>
        {m.role} · {when(m.createdAt)} {entry.active ? "" : `· cut branch ${entry.segment}`}
      </h2>
      <pre class="message-text">{textOf(entry)}</pre>
      <p>
        <Link href={`/s/${sessionId}/turn/${m.turnId}`}>Changes of this turn</Link>
      </p>
      {m.role === "user" && point !== undefined && (
        <RestoreFlow
          key={point.pointId}
          sessionId={sessionId}
          pointId={point.pointId}
          label="Restore files to before this turn…"
        />
      )}
      {m.role === "assistant" && m.anchor !== undefined && entry.active && (
        <ForkButton sessionId={sessionId} messageId={m.id} />
      )}
    </div>
  )
}

export const TimelinePage = ({ sessionId }: { sessionId: string }) => {
  const state = useLoad(() => load(sessionId), [sessionId], sessionId)
  return (
    <section>
      <h1>
        Session <code>{sessionId}</code>
      </h1>
      <Loading state={state}>
        {() => {
          const data = state.value!
          if (!data.history.ok) return <RefusalView refusal={data.history.refusal} />
          const h = data.history.value
          return (
            <>
              <div class="summary">
                <span>{h.entries.filter((e) => e.active).length} active messages</span>
                <span>{h.entries.filter((e) => !e.active).length} cut</span>
                <span>{h.branchGeneration} rewind(s)</span>
                <span>{h.compactions.length} compaction(s)</span>
                <span>{data.points.length} point(s)</span>
                <span>{data.checkpoints.length} checkpoint(s)</span>
                <RedoButton sessionId={sessionId} />
              </div>
              {h.backgroundTasks.length > 0 && (
                <div class="tasks">
                  <h2>Background tasks</h2>
                  <ul>
                    {h.backgroundTasks.map((t) => (
                      <li key={t.taskId}>
                        <span class={`flag flag-${t.status}`}>{t.status}</span> {t.description}{" "}
                        <span class="muted">turn {t.turnId}</span>
                      </li>
                    ))}
                  </ul>
                </div>
              )}
              <Timeline sessionId={sessionId} data={data as Data & { history: { ok: true } }} />
              <details class="points">
                <summary>Points ({data.points.length})</summary>
                <ul>
                  {data.points.map((p) => (
                    <li key={p.pointId}>
                      <Link href={`/s/${sessionId}/point/${p.pointId}`}>
                        {p.kind} point of turn {p.turnId}
                      </Link>{" "}
                      <span class="muted">
                        {when(p.capturedAt)} · {p.files} files
                      </span>
                    </li>
                  ))}
                </ul>
              </details>
            </>
          )
        }}
      </Loading>
    </section>
  )
}
