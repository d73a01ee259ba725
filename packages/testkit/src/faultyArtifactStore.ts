/**
 * A fault-injecting ArtifactStore: a Layer over any ArtifactStore. A failed put or delete is an
 * `ArtifactStoreError`; a failed get can also pretend the blob is missing or corrupt, the two
 * things a restore must refuse on rather than write.
 */
import { ArtifactCorrupt, ArtifactNotFound, ArtifactStoreError, type ContentHash } from "@rewind/contracts"
import { ArtifactStore, type ArtifactStoreService, getEach, hashContent, putEach } from "@rewind/core"
import { Context, Effect, Layer } from "effect"
import { type FaultBook, type FaultRule, makeFaultBook } from "./faultRules.js"

export type ArtifactOperation = "put" | "get" | "has" | "delete"
export interface ArtifactFault extends FaultRule<ArtifactOperation> {
  /** How a failed get fails (default `error`). */
  readonly as?: "error" | "missing" | "corrupt"
}
export type ArtifactFaultControl = Omit<FaultBook<ArtifactOperation, ArtifactFault>, "decide">

export class ArtifactFaults extends Context.Tag("@rewind/testkit/ArtifactFaults")<
  ArtifactFaults,
  ArtifactFaultControl
>() {}

export const makeFaultyArtifactStore = (
  inner: ArtifactStoreService,
): { readonly service: ArtifactStoreService; readonly control: ArtifactFaultControl } => {
  const book = makeFaultBook<ArtifactOperation, ArtifactFault>()
  const failure = (rule: ArtifactFault, target: string) => {
    if (rule.operation === "get" && rule.as === "missing")
      return new ArtifactNotFound({ hash: target as ContentHash })
    if (rule.operation === "get" && rule.as === "corrupt") {
      return new ArtifactCorrupt({ hash: target as ContentHash, actualHash: "0".repeat(64) })
    }
    return new ArtifactStoreError({
      operation: rule.operation,
      message: `injected fault: ${rule.operation} of ${target} failed`,
    })
  }
  const guard = <A, E>(operation: ArtifactOperation, target: string, call: Effect.Effect<A, E>) =>
    Effect.suspend((): Effect.Effect<A, E | ArtifactStoreError | ArtifactNotFound | ArtifactCorrupt> => {
      const rule = book.decide(operation, target)
      if (rule === undefined) return call
      const error = failure(rule, target)
      return (rule.timing ?? "before") === "before"
        ? Effect.fail(error)
        : Effect.zipRight(call, Effect.fail(error))
    })
  const service: ArtifactStoreService = {
    put: (content) =>
      guard("put", hashContent(content), inner.put(content)) as ReturnType<ArtifactStoreService["put"]>,
    get: (hash) => guard("get", hash, inner.get(hash)),
    has: (hash) => guard("has", hash, inner.has(hash)) as ReturnType<ArtifactStoreService["has"]>,
    delete: (hash) => guard("delete", hash, inner.delete(hash)) as ReturnType<ArtifactStoreService["delete"]>,
    // Bulk calls go blob by blob through the guards, so "fail the Nth put" also hits a batch.
    putMany: (contents) => putEach(service.put)(contents),
    getMany: (hashes) => getEach(service.get)(hashes),
    list: () => inner.list(),
    stats: () => inner.stats(),
    now: () => inner.now(),
    sweep: (request) => inner.sweep(request),
  }
  const { decide: _decide, ...control } = book
  return { service, control }
}

/** Wraps the ArtifactStore below it; provides the faulty store and its control. */
export const layerFaultyArtifactStore: Layer.Layer<ArtifactStore | ArtifactFaults, never, ArtifactStore> =
  Layer.effectContext(
    Effect.map(ArtifactStore, (inner) => {
      const { service, control } = makeFaultyArtifactStore(inner)
      return Context.make(ArtifactStore, service).pipe(Context.add(ArtifactFaults, control))
    }),
  )
