/**
 * The store's status: its size and the bytes points share, points per session, paths no point
 * protects (skipped), operations a crash interrupted (continue or roll back each), and the
 * garbage collection: a preview of what it would delete, then the cleanup and its report.
 */
import { Link } from "wouter-preact"
import { useAction } from "./actions.js"
import { Loading, RefusalView, size } from "./common.js"
import {
  type CleanupReport,
  call,
  type IncompleteOperation,
  type Outcome,
  type ResolvedOperation,
  type SnapshotStatus,
  useLoad,
} from "./rpc.js"

const Report = ({ report }: { report: CleanupReport }) => (
  <p data-testid="gc-report">
    {report.swept ? "Swept" : `Not swept${report.reason ? `: ${report.reason}` : ""}`} —{" "}
    {report.deleted.length} blob(s), {size(report.deletedBytes)}; {report.keptYoung} kept (too young);{" "}
    {report.releasedPoints.length} point(s) released.
  </p>
)

const Gc = () => {
  const preview = useAction<CleanupReport>()
  const cleanup = useAction<CleanupReport>()
  return (
    <div class="panel">
      <h2>Garbage collection</h2>
      <button type="button" disabled={preview.busy} onClick={() => preview.run("previewCleanup", [])}>
        Preview cleanup
      </button>
      {preview.outcome?.ok === true && (
        <>
          <Report report={preview.outcome.value} />
          <button
            type="button"
            class="danger"
            disabled={cleanup.busy}
            onClick={() => cleanup.run("cleanup", [])}
          >
            Clean up
          </button>
        </>
      )}
      {preview.outcome?.ok === false && <RefusalView refusal={preview.outcome.refusal} />}
      {cleanup.outcome?.ok === true && <Report report={cleanup.outcome.value} />}
      {cleanup.outcome?.ok === false && <RefusalView refusal={cleanup.outcome.refusal} />}
    </div>
  )
}

const Incomplete = ({ op }: { op: IncompleteOperation }) => {
  const resolve = useAction<ResolvedOperation>()
  const id = op.record.intent.operationId
  return (
    <li>
      <code>{id}</code>{" "}
      <span class="muted">
        {op.record.intent.kind} · {op.record.status}
      </span>
      {op.damaged !== undefined && <span class="flag flag-unsafe">damaged: {op.damaged}</span>}
      <ul class="files">
        {op.files.map((f) => (
          <li key={f.path}>
            <span class="flag">{f.state}</span> <code>{f.path}</code>
          </li>
        ))}
      </ul>
      {op.resolvable && resolve.outcome?.ok !== true && (
        <>
          <button
            type="button"
            disabled={resolve.busy}
            onClick={() => resolve.run("resolveOperation", [id, "continue"])}
          >
            Continue
          </button>{" "}
          <button
            type="button"
            disabled={resolve.busy}
            onClick={() => resolve.run("resolveOperation", [id, "rollback"])}
          >
            Roll back
          </button>
        </>
      )}
      {resolve.outcome?.ok === false && <RefusalView refusal={resolve.outcome.refusal} />}
      {resolve.outcome?.ok === true && <p class="done">Resolved: {resolve.outcome.value.resolution}.</p>}
    </li>
  )
}

export const StatusPage = () => {
  const state = useLoad(
    () =>
      Promise.all([
        call<SnapshotStatus>("snapshotStatus", []),
        call<ReadonlyArray<IncompleteOperation>>("recover", []),
      ]),
    [],
  )
  return (
    <section>
      <h1>Status</h1>
      <Loading state={state}>
        {() => {
          const [status, recover] = state.value as [
            Outcome<SnapshotStatus>,
            Outcome<ReadonlyArray<IncompleteOperation>>,
          ]
          return (
            <>
              {status.ok ? (
                <div class="panel">
                  <h2>Store</h2>
                  <dl class="stats">
                    <dt>store size</dt>
                    <dd data-testid="store-bytes">{size(status.value.storeBytes)}</dd>
                    <dt>shared bytes</dt>
                    <dd>{size(status.value.sharedBytes)}</dd>
                    <dt>index</dt>
                    <dd>{size(status.value.indexBytes)}</dd>
                    <dt>blobs</dt>
                    <dd>{status.value.blobs}</dd>
                  </dl>
                  <h2>Points per session</h2>
                  <ul>
                    {status.value.pointsPerSession.map((p) => (
                      <li key={p.sessionId}>
                        <Link href={`/s/${p.sessionId}`}>
                          <code>{p.sessionId}</code>
                        </Link>
                        : {p.points}
                      </li>
                    ))}
                  </ul>
                  <h2>Unprotected paths</h2>
                  {status.value.unprotected.length === 0 ? (
                    <p class="muted">None: every path is covered by a point.</p>
                  ) : (
                    <ul class="files">
                      {status.value.unprotected.map((u) => (
                        <li key={`${u.sessionId}:${u.path}`}>
                          <code>{u.path}</code> <span class="muted">{u.reason}</span>
                        </li>
                      ))}
                    </ul>
                  )}
                </div>
              ) : (
                <RefusalView refusal={status.refusal} />
              )}
              <div class="panel">
                <h2>Incomplete operations</h2>
                {recover.ok ? (
                  recover.value.length === 0 ? (
                    <p class="muted">None.</p>
                  ) : (
                    <ul>
                      {recover.value.map((op) => (
                        <Incomplete key={op.record.intent.operationId} op={op} />
                      ))}
                    </ul>
                  )
                ) : (
                  <RefusalView refusal={recover.refusal} />
                )}
              </div>
              <Gc />
            </>
          )
        }}
      </Loading>
    </section>
  )
}
