/**
 * A session's timeline: every message of its stream (the active branch, and the branches earlier
 * rewinds cut, greyed but readable, each under a "cut branch" header), compactions marked, each
 * turn's checkpoints and points, the session's background tasks, and the actions on the selected
 * message. The list is virtualised; ↑/↓ or j/k move the selection, Enter opens the turn's changes.
 */
import { useEffect, useRef, useState } from "preact/hooks"
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

/** Entries per `sessionHistory` window: the first screenful comes with the first answer. */
const PAGE = 200

type Row =
  | { readonly kind: "cut"; readonly segment: number; readonly count: number }
  | { readonly kind: "message"; readonly index: number }

const textOf = (entry: HistoryEntry) =>
  entry.parts
    .map((p) => (p.kind === "text" ? (p.text ?? "") : `[${p.kind}${p.toolName ? ` ${p.toolName}` : ""}]`))
    .join(" ")

/**
 * The rows of the whole history from its structure alone (totals and cut segments), so the list is
 * sized before most entries arrived: a "cut branch" header before each segment, then one row per
 * entry index.
 */
const rowsOf = (history: SessionHistory): ReadonlyArray<Row> => {
  const rows: Array<Row> = []
  let next = 0
  for (const s of history.segments) {
    for (; next < s.start; next++) rows.push({ kind: "message", index: next })
    rows.push({ kind: "cut", segment: s.segment, count: s.count })
  }
  for (; next < history.total; next++) rows.push({ kind: "message", index: next })
  return rows
}

interface Data {
  readonly history: Outcome<SessionHistory>
  readonly checkpoints: ReadonlyArray<Checkpoint>
  readonly points: ReadonlyArray<Point>
}

const load = async (sessionId: string): Promise<Data> => {
  const [history, checkpoints, points] = await Promise.all([
    call<SessionHistory>("sessionHistory", [sessionId, { offset: 0, limit: PAGE }]),
    call<ReadonlyArray<Checkpoint>>("listCheckpoints", [sessionId]),
    call<ReadonlyArray<Point>>("listPoints", [sessionId]),
  ])
  return {
    history,
    checkpoints: checkpoints.ok ? checkpoints.value : [],
    points: points.ok ? points.value : [],
  }
}

interface Window {
  /** The history version the window was read at. */
  readonly version: number
  readonly entries: ReadonlyArray<HistoryEntry>
}

/**
 * The entries of the history by index, a window of PAGE entries at a time. Fetching is an effect
 * keyed by the visible windows and the history's version, never a side effect of rendering: each
 * window not yet read at the current version is asked for once (in-flight requests are deduped by
 * version and window). The first window comes with the page's load. On a live update (a new
 * version) the visible windows are read again; until the new answer arrives the older one stays
 * on screen (a session mostly grows at its end, so it is almost always still right).
 */
const useEntries = (sessionId: string, first: SessionHistory, visible: { from: number; to: number }) => {
  const [windows, setWindows] = useState(() => new Map<number, Window>())
  const inFlight = useRef(new Set<string>())
  const latest = useRef(first.version)
  latest.current = first.version
  const fromPage = Math.floor(visible.from / PAGE)
  const toPage = Math.floor(visible.to / PAGE)
  useEffect(() => {
    const version = first.version
    for (let page = Math.max(1, fromPage); page <= toPage; page++) {
      const have = windows.get(page)
      const key = `${version}:${page}`
      if ((have !== undefined && have.version >= version) || inFlight.current.has(key)) continue
      inFlight.current.add(key)
      void call<SessionHistory>("sessionHistory", [sessionId, { offset: page * PAGE, limit: PAGE }])
        .then(
          (answer) => {
            // An answer older than what the page shows now is dropped; a newer one (the store moved
            // on before the live update arrived) is kept: the update then finds it current.
            if (!answer.ok || answer.value.version < latest.current) return
            setWindows((old) => {
              const known = old.get(page)
              if (known !== undefined && known.version >= answer.value.version) return old
              return new Map(old).set(page, { version: answer.value.version, entries: answer.value.entries })
            })
          },
          () => undefined,
        )
        .finally(() => inFlight.current.delete(key))
    }
  }, [sessionId, first.version, fromPage, toPage, windows])
  const entryAt = (index: number): HistoryEntry | undefined => {
    const page = Math.floor(index / PAGE)
    return page === 0 ? first.entries[index] : windows.get(page)?.entries[index % PAGE]
  }
  return { entryAt }
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
  const items = list.getVirtualItems()
  const visible = { from: Number.POSITIVE_INFINITY, to: -1 }
  for (const item of items) {
    const row = rows[item.index]
    if (row?.kind !== "message") continue
    visible.from = Math.min(visible.from, row.index)
    visible.to = Math.max(visible.to, row.index)
  }
  const entries = useEntries(sessionId, history, visible.to < 0 ? { from: 0, to: 0 } : visible)
  const current = rows[Math.min(selected, rows.length - 1)]
  const entry = current?.kind === "message" ? entries.entryAt(current.index) : undefined

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
          const e = row?.kind === "message" ? entries.entryAt(row.index) : undefined
          if (e !== undefined) navigate(`/s/${sessionId}/turn/${e.message.turnId}`)
        }}
        data-testid="timeline"
      >
        <div style={{ height: `${list.getTotalSize()}px`, position: "relative" }}>
          {items.map((item) => {
            const row = rows[item.index]!
            const e = row.kind === "message" ? entries.entryAt(row.index) : undefined
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
                ) : e === undefined ? (
                  <div class="row-loading muted">loading…</div>
                ) : (
                  <MessageRow
                    entry={e}
                    selected={item.index === selected}
                    checkpoints={checkpointsByTurn.get(e.message.turnId) ?? 0}
                    point={pointByTurn.get(e.message.turnId)}
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
          turnId={entry.active ? m.turnId : undefined}
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
                <span>{h.activeCount} active messages</span>
                <span>{h.total - h.activeCount} cut</span>
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
              <Timeline
                key={sessionId}
                sessionId={sessionId}
                data={data as Data & { history: { ok: true } }}
              />
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
