/**
 * The workspace watcher's change log: a batch of changed paths per drain that saw changes, each
 * with its sequence number (the cursor a capture keeps). Invariants: a cursor before `validFrom`
 * is unknown (the log was restarted, cleared or trimmed past it), so a caller must fall back to a
 * full scan for it; the log holds at most `maxLogged` paths, dropping its oldest batches first.
 */
export const makeChangeLog = (maxLogged: number) => {
  let seq = 0
  let validFrom = 0
  let batches: Array<{ readonly seq: number; readonly paths: ReadonlyArray<string> }> = []
  let logged = 0
  return {
    /** The cursor now: the sequence number of the newest batch (or of the last restart). */
    cursor: () => seq,
    /** Nothing before this moment is in the log: earlier cursors are unknown. */
    restart: () => {
      seq++
      validFrom = seq
    },
    /** Forgets every batch (the watcher stopped). */
    clear: () => {
      batches = []
      logged = 0
    },
    /** Logs one drain's paths (nothing when there are none), trimming the oldest batches. */
    append: (paths: ReadonlyArray<string>) => {
      if (paths.length === 0) return
      seq++
      batches.push({ seq, paths })
      logged += paths.length
      while (logged > maxLogged && batches.length > 0) {
        const dropped = batches.shift()!
        logged -= dropped.paths.length
        validFrom = dropped.seq
      }
    },
    /** Whether the log still reaches back to `since`. */
    reaches: (since: number) => since >= validFrom,
    /** The paths of every batch after `since`, newest batch first. */
    pathsAfter: (since: number) => {
      const paths: Array<string> = []
      for (let i = batches.length - 1; i >= 0 && batches[i]!.seq > since; i--)
        for (const p of batches[i]!.paths) paths.push(p)
      return paths
    },
  }
}
