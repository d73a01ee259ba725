/**
 * Small pieces every page uses: how a refusal is shown (its kind, its message and every file its
 * details name), loading and error states, and time and size formatting. Everything is rendered
 * as text nodes: names and contents come from the workspace and are hostile input.
 */
import type { ComponentChildren } from "preact"
import type { Refusal } from "./rpc.js"

export const when = (ms: number) => new Date(ms).toLocaleString()

export const size = (bytes: number) =>
  bytes < 1024
    ? `${bytes} B`
    : bytes < 1024 * 1024
      ? `${(bytes / 1024).toFixed(1)} KiB`
      : `${(bytes / 1024 / 1024).toFixed(1)} MiB`

/** The paths a refusal's details name, wherever they sit (files, conflicts, unsafe, …). */
const pathsIn = (details: unknown, out: Set<string> = new Set(), depth = 0): Set<string> => {
  if (depth > 4 || details === null || typeof details !== "object") return out
  if (Array.isArray(details)) {
    for (const d of details) pathsIn(d, out, depth + 1)
    return out
  }
  for (const [key, value] of Object.entries(details)) {
    if (key === "path" && typeof value === "string") out.add(value)
    else pathsIn(value, out, depth + 1)
  }
  return out
}

export const RefusalView = ({ refusal }: { refusal: Refusal }) => {
  const files = [...pathsIn(refusal.details)]
  return (
    <div class="refusal" role="alert">
      <strong>Refused ({refusal.kind})</strong>: {refusal.message}
      {files.length > 0 && (
        <ul class="files">
          {files.map((f) => (
            <li key={f}>
              <code>{f}</code>
            </li>
          ))}
        </ul>
      )}
      {refusal.details !== undefined && (
        <details>
          <summary>details</summary>
          <pre>{JSON.stringify(refusal.details, null, 2)}</pre>
        </details>
      )}
    </div>
  )
}

export const Loading = ({
  state,
  children,
}: {
  state: { loading: boolean; error?: string }
  children: () => ComponentChildren
}) => {
  if (state.error !== undefined)
    return (
      <p class="error" role="alert">
        {state.error}
      </p>
    )
  if (state.loading) return <p class="muted">loading…</p>
  return <>{children()}</>
}
