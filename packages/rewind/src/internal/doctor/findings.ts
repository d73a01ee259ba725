/**
 * What one doctor run has found so far, shared by its steps: the problems, the blobs verified
 * (read back, hashing to their address) and damaged (there, but corrupt or unreadable), and the
 * references followed. A reference to a damaged blob is not reported again as missing: the blob
 * step already named it; a missing blob is reported once per referring place.
 */
import type { ContentHash, FileVersion } from "@rewind/contracts"
import type { DoctorProblem, DoctorProblemKind } from "./report.js"

export class Findings {
  readonly problems: Array<DoctorProblem> = []
  readonly verified = new Set<ContentHash>()
  readonly damaged = new Set<ContentHash>()
  /** References from streams and journal entries to blobs and parent sessions that were followed. */
  references = 0
  private readonly reported = new Set<string>()

  problem(kind: DoctorProblemKind, subject: string, message: string, repairable = false): void {
    this.problems.push({ kind, subject, message, repairable })
  }

  /** Not in the store at all (neither verified nor damaged). */
  isMissing(hash: ContentHash): boolean {
    return !this.verified.has(hash) && !this.damaged.has(hash)
  }

  /** Follows one reference to a blob from `from`, reporting it when the blob is not there. */
  needBlob(hash: ContentHash | undefined, from: string): void {
    if (hash === undefined) return
    this.references++
    if (!this.isMissing(hash)) return
    const key = `${hash}\u0000${from}`
    if (this.reported.has(key)) return
    this.reported.add(key)
    this.problem("missing_blob", hash, `${from} refers to blob ${hash}, which is not in the artifact store`)
  }
}

export const versionHash = (v: FileVersion | undefined): ContentHash | undefined =>
  v?._tag === "present" ? v.hash : undefined
