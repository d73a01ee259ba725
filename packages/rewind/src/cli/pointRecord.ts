/**
 * The fields of a `point` JSON line, in one place: the full CLI (`capture`, `points`) and the
 * capture handed to a running server (captureClient.ts) print the same shape. It imports nothing,
 * because the hand-over path must not load the CLI's dependencies.
 */

const POINT_FIELDS = [
  "pointId",
  "kind",
  "turnId",
  "capturedAt",
  "files",
  "links",
  "tombstones",
  "bytes",
  "reusedManifest",
  "scanSeal",
  "skipped",
] as const

/** `point`'s fields from a captured point (a `PointCaptured`, or the server's answer of one). */
export const pointRecord = (
  sessionId: string,
  point: { readonly [K in (typeof POINT_FIELDS)[number]]?: unknown },
): Record<string, unknown> => {
  const fields: Record<string, unknown> = { sessionId }
  for (const key of POINT_FIELDS) fields[key] = point[key]
  return fields
}

/**
 * How a capture found its point, for its `point` line: `by` (`seal`: the last point's seal held,
 * and nothing was scanned or, with `rescanned`, only that many directories that changed since;
 * `watcher`; `scan`: the whole tree, with `fullScan` saying why when the last point was sealed),
 * and `unsealed` for a point without a seal (why its next capture scans the whole tree). Nothing
 * for a point that was already captured.
 */
export const scanRecord = (
  scan:
    | {
        readonly by?: unknown
        readonly rescanned?: unknown
        readonly unsealed?: unknown
        readonly fullScan?: unknown
      }
    | undefined,
): Record<string, unknown> => {
  if (scan === undefined) return {}
  const out: Record<string, unknown> = { by: scan.by }
  for (const key of ["rescanned", "unsealed", "fullScan"] as const)
    if (scan[key] !== undefined) out[key] = scan[key]
  return out
}
