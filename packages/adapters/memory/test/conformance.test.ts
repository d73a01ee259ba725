// The shared SessionStore conformance suite, run against the memory adapter. A "reopen" is a new
// service over the same MemoryStoreData, which is all the memory store has to outlive a layer.
import { type EncodedEvent, type SessionId, StoreError } from "@rewind/contracts"
import { storeConformance } from "@rewind/testkit"
import { Effect } from "effect"
import { MemorySessionStore } from "../src/index.js"

storeConformance("memory", () =>
  Effect.sync(() => {
    const data = MemorySessionStore.makeMemoryStoreData()
    return {
      layer: MemorySessionStore.layerFrom(data),
      appendEncoded: (sessionId: SessionId, event: EncodedEvent, at: number) =>
        Effect.suspend(() => {
          const stream = data.streams.get(sessionId)
          if (stream === undefined) {
            return Effect.fail(
              new StoreError({ operation: "appendEncoded", message: `no stream ${sessionId}` }),
            )
          }
          stream.push({ sequence: stream.length + 1, at, json: JSON.stringify(event) })
          return Effect.void
        }),
    }
  }),
)
