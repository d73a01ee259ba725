/**
 * The sessions of the store as a tree: each fork, side chat and subagent under the session it
 * came from, with its title, kind, creation time and number of events.
 */
import { Link } from "wouter-preact"
import { Loading, RefusalView, when } from "./common.js"
import { call, type Outcome, type SessionSummary, useLoad } from "./rpc.js"

const Tree = ({
  parent,
  byParent,
}: {
  parent: string | undefined
  byParent: Map<string | undefined, Array<SessionSummary>>
}) => {
  const children = byParent.get(parent) ?? []
  if (children.length === 0) return null
  return (
    <ul class="tree">
      {children.map((s) => (
        <li key={s.sessionId}>
          <Link href={`/s/${s.sessionId}`} class="session">
            <span class={`kind kind-${s.kind}`}>{s.kind.replace(/_/g, " ")}</span>
            <span class="title">{s.title || "(untitled)"}</span>
            <span class="muted">
              {when(s.createdAt)} · {s.version} events
            </span>
          </Link>
          <Tree parent={s.sessionId} byParent={byParent} />
        </li>
      ))}
    </ul>
  )
}

export const SessionsPage = () => {
  const state = useLoad(() => call<ReadonlyArray<SessionSummary>>("listSessions", []), [])
  return (
    <section>
      <h1>Sessions</h1>
      <Loading state={state}>
        {() => {
          const outcome = state.value as Outcome<ReadonlyArray<SessionSummary>>
          if (!outcome.ok) return <RefusalView refusal={outcome.refusal} />
          const ids = new Set(outcome.value.map((s) => s.sessionId))
          const byParent = new Map<string | undefined, Array<SessionSummary>>()
          // Oldest first inside a level; a parent that is not in the store makes a root.
          for (const s of [...outcome.value].sort((a, b) => a.createdAt - b.createdAt)) {
            const parent = s.parentId !== undefined && ids.has(s.parentId) ? s.parentId : undefined
            byParent.set(parent, [...(byParent.get(parent) ?? []), s])
          }
          return outcome.value.length === 0 ? (
            <p class="muted">No session yet.</p>
          ) : (
            <Tree parent={undefined} byParent={byParent} />
          )
        }}
      </Loading>
    </section>
  )
}
