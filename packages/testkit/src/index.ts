/**
 * @rewind/testkit: what every Rewind adapter and host needs to test against the invariants —
 * deterministic clock and ids, a reference model, model-based command sequences and the shared
 * conformance suites.
 */

export * from "./refusals.js"
export * from "./steppingClock.js"
export * from "./storeConformance.js"
export * as StoreEvents from "./storeEvents.js"
