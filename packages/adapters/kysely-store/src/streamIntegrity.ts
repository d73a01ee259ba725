/**
 * The consistency check every SQL store shares: each stream's projected version equals its last
 * event's sequence, and its sequences have no gap (`n` events numbered 1..n). It is one query that
 * SQLite (3.39 and later: FULL JOIN, IS DISTINCT FROM) and PostgreSQL read the same way, run by
 * each adapter on its own connection inside its integrity check, and one mapping of the rows it
 * finds to sentences. The schemas' own constraints make a mismatch impossible through the store;
 * this finds what raw SQL, a restored backup or a damaged file left.
 */

/** Rows only for the streams that disagree, ordered by session id. */
export const STREAM_CONSISTENCY_SQL = `select coalesce(s.session_id, e.session_id) as session_id, s.version, e.last, e.n
from streams s
full join (select session_id, max(sequence) as last, count(*) as n from events group by session_id) e
  on e.session_id = s.session_id
where s.version is distinct from e.last or e.n is distinct from e.last
order by 1`

export interface StreamConsistencyRow {
  readonly session_id: string
  readonly version: number | string | null
  readonly last: number | string | null
  /** PostgreSQL's count(*) is a bigint, which its driver hands over as text. */
  readonly n: number | string | null
}

/** One sentence per stream that disagrees. */
export const streamConsistencyProblems = (rows: ReadonlyArray<StreamConsistencyRow>): Array<string> =>
  rows.map((r) =>
    r.version === null
      ? `stream ${r.session_id}: events without a streams row`
      : r.last === null
        ? `stream ${r.session_id}: a streams row (version ${r.version}) without events`
        : Number(r.version) !== Number(r.last)
          ? `stream ${r.session_id}: streams.version ${r.version} but the last event is ${r.last}`
          : `stream ${r.session_id}: ${r.n} events numbered up to ${r.last} (a gap)`,
  )
