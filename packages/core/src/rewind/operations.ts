/**
 * `RewindOperations`: one entry per operation of `RewindApi`, describing it as data — its
 * arguments in call order with their Schemas, its answer's Schema, whether it reads, writes or may
 * change files on disk, which argument names its session, and whether it reports progress. Host
 * surfaces are derived from this table by one loop (the Promise facade, the server's methods and
 * `--schema`, the MCP tool list); the type below makes forgetting an operation a compile error.
 */
import type { RewindApi } from "./api.js"
import { fileSpecs } from "./fileOperationSpecs.js"
import { forkSpecs, mergeSpecs } from "./forkOperationSpecs.js"
import type { Spec } from "./operationSpec.js"
import { pointSpecs } from "./pointOperationSpecs.js"
import { sessionSpecs } from "./sessionOperationSpecs.js"

export type { OperationArgument, OperationSpec, SuccessOf } from "./operationSpec.js"

/** The entries are grouped by capability in the `*OperationSpecs.ts` modules. */
export const RewindOperations: { readonly [K in keyof RewindApi]: Spec<K> } = {
  ...sessionSpecs,
  ...fileSpecs,
  ...forkSpecs,
  ...pointSpecs,
  ...mergeSpecs,
}
