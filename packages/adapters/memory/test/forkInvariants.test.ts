// Invariant 6 (a fork leaves the parent unchanged, points only inside itself, replays to the same
// child) over random sessions, on the memory store.
import { describeForkInvariants } from "@rewind/testkit"
import { MemorySessionStore } from "../src/index.js"

describeForkInvariants("memory", { makeStoreLayer: () => MemorySessionStore.layer })
