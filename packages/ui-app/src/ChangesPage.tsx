/**
 * A turn's or a point's changes. For a turn: the files its tools changed (added, modified,
 * deleted, shell-only), what undoing them would do (the engine's file rewind preview: safe,
 * unsafe with the reason, ignored), and the diff of each file since before the turn (its point).
 * For a point: what differs between it and the workspace now. One diff per selected file, and
 * the restore to that point (preview → confirm).
 */
import { useState } from "preact/hooks"
import { Link } from "wouter-preact"
import { RedoButton, RestoreFlow, useAction } from "./actions.js"
import { Loading, RefusalView, when } from "./common.js"
import { DiffView } from "./DiffView.js"
import {
  type AppliedFileRewind,
  call,
  type FileRewindPreview,
  type Outcome,
  type Point,
  type PointDiff,
  type TurnFileChanges,
  useLoad,
} from "./rpc.js"

interface Data {
  readonly changes?: Outcome<TurnFileChanges | undefined>
  readonly preview?: Outcome<FileRewindPreview>
  readonly pointId?: string
  readonly diff?: Outcome<PointDiff>
}

const load = async (sessionId: string, turnId?: string, pointId?: string): Promise<Data> => {
  if (turnId === undefined) {
    return { pointId, diff: await call<PointDiff>("diffPoint", [sessionId, pointId, { patches: true }]) }
  }
  const [changes, preview, points] = await Promise.all([
    call<TurnFileChanges | undefined>("turnFileChanges", [sessionId, turnId]),
    call<FileRewindPreview>("previewFileRewind", [{ sessionId, turnId }]),
    call<ReadonlyArray<Point>>("listPoints", [sessionId]),
  ])
  const point = points.ok ? points.value.find((p) => p.kind === "turn" && p.turnId === turnId) : undefined
  const diff =
    point === undefined
      ? undefined
      : await call<PointDiff>("diffPoint", [sessionId, point.pointId, { patches: true }])
  return { changes, preview, pointId: point?.pointId, ...(diff === undefined ? {} : { diff }) }
}

/**
 * Stays mounted while the page reloads (the preview after an apply may be a refusal), so the
 * answer of an apply and the redo it offers are not lost to a live update.
 */
const FileRewind = ({ sessionId, outcome }: { sessionId: string; outcome: Outcome<FileRewindPreview> }) => {
  const apply = useAction<AppliedFileRewind>()
  const preview = outcome.ok ? outcome.value : undefined
  return (
    <div class="panel">
      <h2>Undo this turn's file changes</h2>
      {!outcome.ok && <RefusalView refusal={outcome.refusal} />}
      {preview !== undefined && (
        <>
          <ul class="files">
            {preview.files.map((f) => (
              <li key={f.path}>
                <span class="flag flag-safe">{f.action}</span> <code>{f.path}</code>
              </li>
            ))}
            {preview.unsafe.map((f) => (
              <li key={`u${f.path}`}>
                <span class="flag flag-unsafe">unsafe: {f.reason}</span> <code>{f.path}</code> — {f.message}
              </li>
            ))}
            {preview.ignored.map((f) => (
              <li key={`i${f.path}`}>
                <span class="flag flag-ignored">ignored ({f.reason ?? "shell_like_tool"})</span>{" "}
                <code>{f.path}</code> <span class="muted">{f.toolName}</span>
              </li>
            ))}
          </ul>
          {preview.canApply ? (
            <button
              type="button"
              class="danger"
              disabled={apply.busy}
              onClick={() => apply.run("applyFileRewind", [preview])}
            >
              Apply file rewind
            </button>
          ) : (
            <p class="muted">
              Cannot apply: {preview.unsafe.length > 0 ? "some files are unsafe" : "nothing to undo"}.
            </p>
          )}
        </>
      )}
      {apply.error !== undefined && <p class="error">{apply.error}</p>}
      {apply.outcome?.ok === false && <RefusalView refusal={apply.outcome.refusal} />}
      {apply.outcome?.ok === true && (
        <div class="done" data-testid="file-rewind-done">
          Applied: {apply.outcome.value.files.map((f) => `${f.path} ${f.action}`).join(", ")}.
          <RedoButton sessionId={sessionId} label="Redo (undo this file rewind)" />
        </div>
      )}
    </div>
  )
}

const Diffs = ({ diff }: { diff: PointDiff }) => {
  const [open, setOpen] = useState<string | undefined>(diff.entries[0]?.path)
  const entry = diff.entries.find((e) => e.path === open)
  return (
    <div class="panel">
      <h2>Differences since the point ({when(diff.capturedAt)})</h2>
      {diff.entries.length === 0 && <p class="muted">The workspace is as it was at this point.</p>}
      <ul class="files">
        {diff.entries.map((e) => (
          <li key={e.path}>
            <button
              type="button"
              class={`file ${e.path === open ? "open" : ""}`}
              data-path={e.path}
              onClick={() => setOpen(e.path)}
            >
              <span class={`flag flag-${e.change}`}>{e.change}</span>
              {e.untracked && <span class="flag flag-ignored">untracked</span>}
              {e.noPatch !== undefined && <span class="flag">{e.noPatch.replace("_", " ")}</span>}{" "}
              <code>{e.path}</code>
            </button>
          </li>
        ))}
      </ul>
      {diff.skipped.length > 0 && (
        <p class="muted">Not captured: {diff.skipped.map((s) => `${s.path} (${s.reason})`).join(", ")}</p>
      )}
      {entry !== undefined && <DiffView key={entry.path} entry={entry} />}
    </div>
  )
}

export const ChangesPage = ({
  sessionId,
  turnId,
  pointId,
}: {
  sessionId: string
  turnId?: string
  pointId?: string
}) => {
  const state = useLoad(() => load(sessionId, turnId, pointId), [sessionId, turnId, pointId], sessionId)
  return (
    <section>
      <p>
        <Link href={`/s/${sessionId}`}>← timeline</Link>
      </p>
      <h1>
        {turnId !== undefined ? (
          <>
            Turn <code>{turnId}</code>
          </>
        ) : (
          <>
            Point <code>{pointId}</code>
          </>
        )}
      </h1>
      <Loading state={state}>
        {() => {
          const d = state.value!
          return (
            <>
              {d.changes?.ok === false && <RefusalView refusal={d.changes.refusal} />}
              {d.changes?.ok === true && d.changes.value !== undefined && (
                <div class="panel">
                  <h2>
                    Files this turn changed (+{d.changes.value.linesAdded} −{d.changes.value.linesRemoved})
                  </h2>
                  <ul class="files">
                    {d.changes.value.files.map((f) => (
                      <li key={f.path}>
                        <span class={`flag flag-${f.created ? "added" : f.deleted ? "deleted" : "modified"}`}>
                          {f.created ? "added" : f.deleted ? "deleted" : "modified"}
                        </span>
                        {f.shellOnly && <span class="flag flag-ignored">shell</span>} <code>{f.path}</code>{" "}
                        <span class="muted">
                          +{f.linesAdded} −{f.linesRemoved} · {f.toolNames.join(", ")}
                        </span>
                      </li>
                    ))}
                  </ul>
                </div>
              )}
              {d.preview !== undefined && <FileRewind sessionId={sessionId} outcome={d.preview} />}
              {d.pointId !== undefined && (
                <RestoreFlow
                  sessionId={sessionId}
                  pointId={d.pointId}
                  {...(turnId === undefined ? {} : { turnId })}
                  label={
                    turnId !== undefined ? "Restore files to before this turn…" : "Restore to this point…"
                  }
                />
              )}
              {d.diff?.ok === false && <RefusalView refusal={d.diff.refusal} />}
              {d.diff?.ok === true && <Diffs diff={d.diff.value} />}
              {turnId !== undefined && d.pointId === undefined && (
                <p class="muted">This turn has no point: no diff since before it.</p>
              )}
            </>
          )
        }}
      </Loading>
    </section>
  )
}
