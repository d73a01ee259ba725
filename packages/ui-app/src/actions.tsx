/**
 * The actions that change something, each with the engine's own safety: a restore is previewed
 * first (the plan, protected paths, conflicts), confirmed with the preview's token, and answered
 * with its rescue point; the engine's one redo undoes the session's last restore (a point restore,
 * a file rewind or a rewind that wrote files), refusing when a file changed since; a fork is made at a reply
 * whose boundary is pinned. The engine decides; every refusal is shown with its reason and files.
 */
import { useState } from "preact/hooks"
import { useLocation } from "wouter-preact"
import { RefusalView } from "./common.js"
import {
  call,
  type ForkOutcome,
  type Outcome,
  type PointRestorePreview,
  type PointRestoreResult,
  type RedoResult,
  type TurnRestoreTarget,
} from "./rpc.js"

/** Runs one call at a time and keeps its last outcome (or error). */
export const useAction = <A,>() => {
  const [busy, setBusy] = useState(false)
  const [outcome, setOutcome] = useState<Outcome<A> | undefined>()
  const [error, setError] = useState<string | undefined>()
  const run = async (method: string, params: ReadonlyArray<unknown>) => {
    setBusy(true)
    setError(undefined)
    try {
      const answer = await call<A>(method, params)
      setOutcome(answer)
      return answer
    } catch (e) {
      setError(String(e))
      return undefined
    } finally {
      setBusy(false)
    }
  }
  return { busy, outcome, error, run, reset: () => setOutcome(undefined) }
}

const Failure = ({ error }: { error: string | undefined }) =>
  error === undefined ? null : (
    <p class="error" role="alert">
      {error}
    </p>
  )

export const RedoButton = ({
  sessionId,
  label = "Redo: undo the last restore",
}: {
  sessionId: string
  label?: string
}) => {
  const redo = useAction<RedoResult>()
  return (
    <div class="action">
      <button type="button" disabled={redo.busy} onClick={() => redo.run("redo", [sessionId])}>
        {label}
      </button>
      <Failure error={redo.error} />
      {redo.outcome?.ok === false && <RefusalView refusal={redo.outcome.refusal} />}
      {redo.outcome?.ok === true && (
        <div class="done" data-testid="redo-done">
          Redone (operation <code>{redo.outcome.value.operationId}</code>):{" "}
          {redo.outcome.value.files.map((f) => `${f.path} ${f.action}`).join(", ") || "no file"}
          {redo.outcome.value.kept.length > 0 &&
            `; kept as the restore left them: ${redo.outcome.value.kept.map((k) => `${k.path} (${k.kind})`).join(", ")}`}
        </div>
      )}
    </div>
  )
}

export const ForkButton = ({ sessionId, messageId }: { sessionId: string; messageId: string }) => {
  const fork = useAction<ForkOutcome>()
  const [, navigate] = useLocation()
  return (
    <div class="action">
      <button
        type="button"
        disabled={fork.busy}
        onClick={async () => {
          const answer = await fork.run("forkAtMessage", [sessionId, messageId])
          if (answer?.ok) navigate(`/s/${answer.value.childSessionId}`)
        }}
      >
        Fork at this reply
      </button>
      <Failure error={fork.error} />
      {fork.outcome?.ok === false && <RefusalView refusal={fork.outcome.refusal} />}
    </div>
  )
}

/**
 * Preview → confirm with the token → restore (a rescue point first) → offer redo. With `turnId`,
 * "before this turn": the engine's turn target first (`turnRestoreTarget`: the turn's point, or one
 * with a tombstone for each file created since, so those are deleted too), then its preview.
 */
export const RestoreFlow = ({
  sessionId,
  pointId,
  turnId,
  label,
}: {
  sessionId: string
  pointId: string
  turnId?: string
  label: string
}) => {
  const target = useAction<TurnRestoreTarget>()
  const preview = useAction<PointRestorePreview>()
  const restore = useAction<PointRestoreResult>()
  const plan = preview.outcome?.ok === true ? preview.outcome.value : undefined
  const turn = target.outcome?.ok === true ? target.outcome.value : undefined
  const planned = plan?.pointId ?? pointId
  return (
    <div class="action restore">
      <button
        type="button"
        disabled={preview.busy || target.busy}
        onClick={() => {
          restore.reset()
          preview.reset()
          void (async () => {
            if (turnId === undefined) return preview.run("previewPointRestore", [sessionId, pointId])
            const found = await target.run("turnRestoreTarget", [sessionId, turnId])
            if (found?.ok === true) await preview.run("previewPointRestore", [sessionId, found.value.pointId])
            // A turn a conversation rewind cut has no place on the active branch: its own point.
            else if (found?.ok === false && found.refusal.kind === "not_found")
              await preview.run("previewPointRestore", [sessionId, pointId])
          })()
        }}
      >
        {label}
      </button>
      <Failure error={target.error ?? preview.error ?? restore.error} />
      {target.outcome?.ok === false &&
        (target.outcome.refusal.kind === "not_found" ? (
          <p class="muted">
            This turn is not on the active branch: the preview is of its own point, which leaves files created
            since as they are.
          </p>
        ) : (
          <RefusalView refusal={target.outcome.refusal} />
        ))}
      {preview.outcome?.ok === false && <RefusalView refusal={preview.outcome.refusal} />}
      {plan !== undefined && restore.outcome === undefined && (
        <div class="plan" data-testid="restore-plan">
          <p>
            {plan.changes.length} file(s) would change, {plan.unchanged} unchanged.
          </p>
          <ul class="files">
            {plan.changes.map((c) => (
              <li key={c.path}>
                <span class={`flag flag-${c.action}`}>{c.action}</span> <code>{c.path}</code>
              </li>
            ))}
          </ul>
          {plan.protected.length > 0 && (
            <p class="muted">
              Protected, left alone: {plan.protected.map((p) => `${p.path} (${p.kind})`).join(", ")}
            </p>
          )}
          {turn !== undefined && turn.leftAlone.length + turn.laterLeftOut.length > 0 && (
            <p class="muted" data-testid="left-alone">
              Created later, left alone:{" "}
              {[
                ...turn.leftAlone.map((l) => `${l.path} (unseen before the turn: ${l.reason} at ${l.at})`),
                ...turn.laterLeftOut.map((s) => `${s.path} (in no point: ${s.detail ?? s.reason})`),
              ].join(", ")}
            </p>
          )}
          {plan.leftOut.length > 0 && (
            <p class="muted" data-testid="left-out">
              Not in the point, left as it is:{" "}
              {plan.leftOut.map((s) => `${s.path} (${s.detail ?? s.reason})`).join(", ")}
            </p>
          )}
          {plan.conflicts.length > 0 && (
            <div class="refusal">
              <strong>Cannot apply:</strong>
              <ul class="files">
                {plan.conflicts.map((c) => (
                  <li key={c.path}>
                    <code>{c.path}</code>: {c.reason} — {c.detail}
                  </li>
                ))}
              </ul>
            </div>
          )}
          {plan.canApply && plan.token !== undefined ? (
            <button
              type="button"
              class="danger"
              disabled={restore.busy}
              onClick={() => restore.run("restorePoint", [sessionId, planned, plan.token])}
            >
              Confirm restore
            </button>
          ) : (
            <p class="muted">Nothing to apply.</p>
          )}
        </div>
      )}
      {restore.outcome?.ok === false && <RefusalView refusal={restore.outcome.refusal} />}
      {restore.outcome?.ok === true && (
        <div class="done" data-testid="restore-done">
          <p>
            Restored (operation <code>{restore.outcome.value.operationId}</code>). Rescue point:{" "}
            <code>{restore.outcome.value.rescuePointId}</code>.
          </p>
          {/* The engine's one redo undoes a point restore (its redo entry), refusing if a file changed since. */}
          <RedoButton sessionId={sessionId} label="Undo this restore (redo)" />
        </div>
      )}
    </div>
  )
}
