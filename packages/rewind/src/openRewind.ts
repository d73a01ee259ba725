/**
 * The Promise facade, generated from the declared `Rewind` service (`@rewind/core`): `openRewind`
 * builds the service over the embedded default store (or an injected Layer) and maps every entry
 * of `RewindOperations` to an async method by one loop — no per-method code, so no operation can
 * be forgotten or answer differently. Every method answers one shape, `{ ok: true, value }` or
 * `{ ok: false, refusal }` (input its Schemas refuse: `invalid_input`, naming the field); typed
 * infrastructure errors reject with the error itself; after `close()` every call rejects with
 * `RewindClosed`; once the embedded store it opened was removed or replaced (storeLayout.ts),
 * every call rejects with `StoreReplaced` and runs nothing.
 *
 * Call options (`signal`: aborting interrupts the operation's fiber, and the promise rejects) come
 * last: in the operation's own options object when it has one (`capturePoint`, `diffPoint`,
 * `previewCleanup`, `cleanup`, `doctor`), otherwise as one more, optional, trailing argument.
 */

import { type Outcome, refuse, toOutcome, VersionConflict } from "@rewind/contracts"
import {
  decodeArguments,
  type OperationArgument,
  type RewindApi,
  RewindOperations,
  Rewind as RewindService,
} from "@rewind/core"
import { Cause, Effect, Either, type Exit, Exit as Exits, ManagedRuntime, Schema } from "effect"
import { RewindClosed, type StoreReplaced } from "./errors.js"
import type { EngineServices } from "./layers.js"
import { layerService, type OpenRewindOptions } from "./serviceLayer.js"
import { mendLayout, storeIdentity, storeReplacement } from "./storeLayout.js"

export type { OpenRewindOptions } from "./serviceLayer.js"

/** Options every facade call accepts. */
export interface CallOptions {
  /** Aborting interrupts the operation's fiber; the promise then rejects. */
  readonly signal?: AbortSignal
}

/** The operations whose last argument is their own options object: call options go in it. */
type OptionsLast = "capturePoint" | "diffPoint" | "previewCleanup" | "cleanup" | "doctor"

/** An operation as the facade calls it: the same arguments, call options last, a Promise of the answer. */
export type FacadeMethod<K extends keyof RewindApi> = RewindApi[K] extends (
  ...args: infer P
) => Effect.Effect<infer O, infer _E>
  ? K extends OptionsLast
    ? (
        ...args: { [I in keyof P]: P[I] extends string | undefined ? P[I] : NonNullable<P[I]> & CallOptions }
      ) => Promise<O>
    : (...args: [...P, options?: CallOptions]) => Promise<O>
  : never

/** Every operation of `RewindApi`, as a Promise. */
export type RewindMethods = { readonly [K in keyof RewindApi]: FacadeMethod<K> }

/** An open Rewind: every operation of the `Rewind` service as a Promise, plus its lifecycle. */
export interface RewindFacade extends RewindMethods {
  /** The workspace root this instance restores files into. */
  readonly workspaceRoot: string
  /** The store directory of the embedded default; undefined when a Layer was injected. */
  readonly dir: string | undefined
  /** Runs any Effect program over the services; a refusal becomes `{ ok: false, refusal }`. */
  readonly outcome: <A, Err>(
    effect: Effect.Effect<A, Err, EngineServices>,
    options?: CallOptions,
  ) => Promise<Outcome<A>>
  /** Runs any Effect program over the services; its failures (refusals included) reject. */
  readonly run: <A, Err>(effect: Effect.Effect<A, Err, EngineServices>, options?: CallOptions) => Promise<A>
  /**
   * Releases the runtime: closes the database and finalizes every layer. Idempotent; every later
   * call rejects with `RewindClosed`.
   */
  readonly close: () => Promise<void>
}

/** An open Rewind (the facade's type). */
export type Rewind = RewindFacade

const conflictRefusal = (error: VersionConflict) =>
  refuse(
    "conflict",
    `another writer kept changing session ${error.sessionId} while this ran (${error.message}); its record was not appended, try again`,
  )

const unwrap = <A, E>(exit: Exit.Exit<A, E>): A => {
  if (Exits.isSuccess(exit)) return exit.value
  // Reject with the typed error itself (or the defect / interruption), not a wrapper around it.
  throw Cause.squash(exit.cause)
}

const callOptions: OperationArgument = {
  name: "options",
  schema: Schema.UndefinedOr(
    Schema.Struct({
      signal: Schema.optional(
        Schema.instanceOf(AbortSignal).annotations({
          arbitrary: () => (fc) => fc.constant(new AbortController().signal),
        }),
      ),
    }),
  ),
  optional: true,
}

/**
 * Splits a facade call into the operation's arguments and the call options: the decoded
 * `signal`, or the sentence of an `invalid_input` answer.
 */
const splitCall = (
  name: keyof RewindApi,
  args: ReadonlyArray<unknown>,
): Either.Either<{ readonly args: ReadonlyArray<unknown>; readonly signal?: AbortSignal }, string> => {
  const params = RewindOperations[name].args
  const optionsLast = params.at(-1)?.name === "options"
  const most = params.length + (optionsLast ? 0 : 1)
  if (args.length > most) {
    const names = [...params.map((p) => p.name), ...(optionsLast ? [] : ["options"])]
    return Either.left(`${name}: takes at most ${most} argument(s) (${names.join(", ")}), got ${args.length}`)
  }
  const at = optionsLast ? params.length - 1 : params.length
  const operationArgs = optionsLast ? args : args.slice(0, params.length)
  // Most calls pass no options: nothing to decode (the Schema would answer `undefined` too).
  if (args[at] === undefined) return Either.right({ args: operationArgs })
  const decoded = decodeArguments(name, [callOptions], [args[at]])
  if (Either.isLeft(decoded)) return Either.left(decoded.left)
  const signal = (decoded.right[0] as CallOptions | undefined)?.signal
  return Either.right(signal === undefined ? { args: operationArgs } : { args: operationArgs, signal })
}

const makeFacade = (
  runtime: ManagedRuntime.ManagedRuntime<RewindService | EngineServices, unknown>,
  info: { readonly workspaceRoot: string; readonly dir: string | undefined },
): RewindFacade => {
  let closed = false
  // The embedded default's store, checked and mended before every call (storeLayout.ts): one that
  // was removed or replaced since it was opened refuses every call from then on, since SQLite
  // would write into the unlinked database; a `git clean -x` between two calls of a long-lived
  // host takes its `.gitignore` and link, put back here.
  const dir = info.dir
  const identity = dir === undefined ? undefined : storeIdentity(dir)
  let replaced: StoreReplaced | undefined
  const upkeep = dir === undefined ? () => {} : () => mendLayout(dir)
  const closedError = (method: string) =>
    new RewindClosed({
      method,
      message: `${method}: this Rewind was closed; nothing ran (open a new one with openRewind)`,
    })
  /**
   * Before every call: the rejection of a call after `close()` or on a store that is no longer the
   * one opened, or undefined once the store is mended.
   */
  const refusedOrMended = (method: string): Promise<never> | undefined => {
    if (closed) return Promise.reject(closedError(method))
    if (replaced === undefined && identity !== undefined) replaced = storeReplacement(identity)
    if (replaced !== undefined) return Promise.reject(replaced)
    upkeep()
    return undefined
  }

  const methods: Record<string, (...args: ReadonlyArray<unknown>) => Promise<unknown>> = {}
  for (const name of Object.keys(RewindOperations) as ReadonlyArray<keyof RewindApi>) {
    methods[name] = (...args) => {
      const refused = refusedOrMended(name)
      if (refused !== undefined) return refused
      const call = splitCall(name, args)
      if (Either.isLeft(call))
        return Promise.resolve({ ok: false, refusal: { kind: "invalid_input", message: call.left } })
      const program = Effect.flatMap(RewindService, (rewind) =>
        (rewind[name] as (...a: ReadonlyArray<unknown>) => Effect.Effect<unknown, unknown>)(
          ...call.right.args,
        ),
      )
      return runtime
        .runPromiseExit(program, call.right.signal === undefined ? undefined : { signal: call.right.signal })
        .then(unwrap)
    }
  }

  const outcome = <A, Err>(
    effect: Effect.Effect<A, Err, EngineServices>,
    options?: CallOptions,
  ): Promise<Outcome<A>> => {
    const refused = refusedOrMended("outcome")
    if (refused !== undefined) return refused
    return runtime
      .runPromiseExit(
        toOutcome(
          Effect.catchIf(
            effect,
            (e): e is Err & VersionConflict => e instanceof VersionConflict,
            (e) => conflictRefusal(e),
          ),
        ),
        options,
      )
      .then(unwrap)
  }

  const run = <A, Err>(effect: Effect.Effect<A, Err, EngineServices>, options?: CallOptions): Promise<A> => {
    const refused = refusedOrMended("run")
    if (refused !== undefined) return refused
    return runtime.runPromiseExit(effect, options).then(unwrap)
  }

  return {
    ...(methods as unknown as RewindMethods),
    workspaceRoot: info.workspaceRoot,
    dir: info.dir,
    outcome,
    run,
    close: (): Promise<void> => {
      closed = true
      return runtime.dispose()
    },
  }
}

/**
 * Opens Rewind on a workspace. Without `layer`, the embedded default: SQLite at
 * `<dir>/rewind.db` (events, journal and blobs in one SQLite file), `dir` defaulting to `<workspaceRoot>/.rewind`.
 * Rejects with the typed error when the store cannot be opened.
 */
export const openRewind = async <E = never>(options: OpenRewindOptions<E>): Promise<Rewind> => {
  const { dir, layer } = layerService(options)
  const runtime: ManagedRuntime.ManagedRuntime<RewindService | EngineServices, unknown> =
    ManagedRuntime.make(layer)
  try {
    // Build now, so a store that cannot be opened rejects here rather than on the first call.
    await runtime.runPromiseExit(Effect.void).then(unwrap)
  } catch (error) {
    await runtime.dispose()
    throw error
  }
  return makeFacade(runtime, { workspaceRoot: options.workspaceRoot, dir })
}

export type {
  CaptureOptions,
  CaptureOutcome,
  CaptureProgress,
  CleanupOptions,
  CleanupReport,
  IncompleteOperation,
  PointRestorePreview,
  PointRestoreResult,
  RedoResult,
  Resolution,
  SnapshotStatus,
} from "@rewind/core"
export type { DoctorOptions, DoctorProblem, DoctorProblemKind, DoctorReport } from "./internal/doctor.js"
