/**
 * @rewind/testkit: what every Rewind adapter and host needs to test against the invariants —
 * deterministic clock and ids, a reference model, model-based command sequences and the shared
 * conformance suites.
 */

export * from "./arbitraries.js"
export * from "./forkFixtures.js"
export * from "./forkInvariants.js"
export * from "./refusals.js"
export * from "./scriptedBackgroundTasks.js"
export * from "./sessionModel.js"
export * from "./sessionModelTests.js"
export * from "./steppingClock.js"
export * from "./storeConformance.js"
export * as StoreEvents from "./storeEvents.js"
