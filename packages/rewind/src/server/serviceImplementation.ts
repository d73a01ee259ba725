/**
 * The declared `Rewind` service as the servers call it: each operation of `RewindOperations` run
 * on the open facade's runtime (its store, opened once by the command), as an Effect whose
 * interruption aborts the call. Arguments arrive decoded by the server; nothing is decoded again.
 */
import { RewindOperations, Rewind as RewindService } from "@rewind/core"
import { Effect } from "effect"
import type { Rewind } from "../openRewind.js"
import type { Outcome, ServedMethod } from "./rpcServer.js"

type Name = keyof typeof RewindOperations

export const serviceImplementation = (rewind: Rewind): { readonly [K in Name]: ServedMethod } =>
  Object.fromEntries(
    (Object.keys(RewindOperations) as ReadonlyArray<Name>).map((name) => {
      const method: ServedMethod = (...args) =>
        Effect.tryPromise({
          try: (signal) => {
            const program = Effect.flatMap(RewindService, (service) =>
              (service[name] as (...a: ReadonlyArray<unknown>) => Effect.Effect<Outcome, unknown>)(...args),
            )
            // The facade's runtime provides the service; `run` is typed with the engine's services only.
            return rewind.run(program as unknown as Effect.Effect<Outcome, unknown, never>, { signal })
          },
          catch: (error) => error,
        })
      return [name, method]
    }),
  ) as { readonly [K in Name]: ServedMethod }
