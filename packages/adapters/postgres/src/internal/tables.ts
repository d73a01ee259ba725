/**
 * The PostgreSQL store's tables as Kysely sees them: the session store's and the operation
 * journal's (shared with every SQL adapter) and the artifact blobs.
 */
import type { OperationJournalTables, StoreTables } from "@rewind/kysely-store"

export interface ArtifactsTable {
  /** The SHA-256 of `content`, lowercase hex. */
  readonly hash: string
  readonly content: Uint8Array
  readonly size: number
  /** The server's clock (ms) at the last put of this content. */
  readonly stored_at: number
}

export interface PostgresTables extends StoreTables, OperationJournalTables {
  readonly artifacts: ArtifactsTable
}
