/**
 * Doctor's blob step: every blob the artifact store lists is read back, which re-hashes it against
 * its address (a store's `get` fails with ArtifactCorrupt when the bytes do not match). What reads
 * back is `verified`, what does not is `damaged` and reported; later steps use both sets.
 */
import type { ContentHash } from "@rewind/contracts"
import { ArtifactStore } from "@rewind/core"
import { Effect, Either, Stream } from "effect"
import type { Findings } from "./findings.js"
import type { DoctorReport } from "./report.js"

export const checkBlobs = (findings: Findings, onProgress?: (checked: number) => void) =>
  Effect.gen(function* () {
    const artifacts = yield* ArtifactStore
    const bad: Array<{ hash: ContentHash; problem: string }> = []
    let checked = 0
    let bytes = 0
    const listed = yield* artifacts.list().pipe(
      Stream.runForEach((info) =>
        artifacts.get(info.hash).pipe(
          Effect.match({
            onFailure: (error) => {
              const message = `${error._tag}: ${error.message}`
              bad.push({ hash: info.hash, problem: message })
              findings.damaged.add(info.hash)
              findings.problem(
                error._tag === "ArtifactCorrupt" ? "blob_corrupt" : "blob_unreadable",
                info.hash,
                message,
              )
            },
            onSuccess: (content) => {
              bytes += content.byteLength
              findings.verified.add(info.hash)
            },
          }),
          Effect.tap(() => {
            checked++
            onProgress?.(checked)
          }),
        ),
      ),
      Effect.either,
    )
    if (Either.isLeft(listed)) {
      findings.problem(
        "blob_unreadable",
        "artifacts",
        `the artifact store cannot be listed: ${listed.left.message}`,
      )
    }
    return { checked, bytes, bad } satisfies DoctorReport["artifacts"]
  })
