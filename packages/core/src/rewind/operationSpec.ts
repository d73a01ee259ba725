/**
 * How an operation of `RewindApi` is described as data (`OperationSpec`), the helper that builds a
 * spec whose success Schema must decode to exactly what the operation's signature answers (`op`),
 * and the arguments many operations share. A spec names its session through its `sessionId`
 * argument unless it says otherwise.
 */
import { CommandId, ForkWorkspace, MessageId, type Outcome, SessionId } from "@rewind/contracts"
import { type Effect, Schema } from "effect"
import type { RewindApi } from "./api.js"
import type { OperationArgument } from "./arguments.js"
import * as A from "./arguments.js"

export type { OperationArgument }

export interface OperationSpec {
  /** The method name, e.g. "appendUserMessage". */
  readonly name: string
  /** One sentence a model or a human can act on (server `--schema`, MCP, docs). */
  readonly summary: string
  readonly args: ReadonlyArray<OperationArgument>
  /** The `value` of `{ ok: true, value }`. */
  readonly success: Schema.Schema.AnyNoContext
  /** `destructive`: may change files on disk or cut a branch. */
  readonly access: "read" | "write" | "destructive"
  /** The argument naming the session the call works on (an object argument: its `sessionId`). */
  readonly session?: string
  /** The call reports progress through `onProgress` in its options (its last argument). */
  readonly progress?: boolean
}

export const arg = (name: string, schema: Schema.Schema.AnyNoContext): OperationArgument => ({ name, schema })
export const optional = (name: string, schema: Schema.Schema.AnyNoContext): OperationArgument => ({
  name,
  schema: Schema.UndefinedOr(schema),
  optional: true,
})
export const sessionId = arg("sessionId", SessionId)
export const messageId = arg("messageId", MessageId)
export const token = arg("token", A.Token)
export const commandId = optional("commandId", CommandId)
/** `shared` (default) or `isolated` with a root: where a fork's child works. */
export const forkWorkspace = optional("workspace", ForkWorkspace)

/** The value an operation of `RewindApi` answers when it succeeds. */
export type SuccessOf<F> = F extends (...args: never) => Effect.Effect<Outcome<infer A>, unknown> ? A : never

/** A spec whose success Schema decodes to exactly what the operation's signature answers. */
export type Spec<K extends keyof RewindApi> = OperationSpec & {
  readonly name: K
  readonly success: { readonly Type: SuccessOf<RewindApi[K]> }
}

export const op = <const K extends keyof RewindApi>(
  name: K,
  access: OperationSpec["access"],
  summary: string,
  args: ReadonlyArray<OperationArgument>,
  success: Schema.Schema.AnyNoContext & { readonly Type: SuccessOf<RewindApi[K]> },
  extra: { readonly session?: string; readonly progress?: boolean } = {},
): Spec<K> => ({
  name,
  summary,
  args,
  success,
  access,
  ...(args.some((a) => a.name === "sessionId") ? { session: "sessionId" } : {}),
  ...extra,
})
