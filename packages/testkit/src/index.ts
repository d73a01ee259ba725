/**
 * @rewind/testkit: what every Rewind adapter and host needs to test against the invariants —
 * deterministic clock and ids, a reference model, model-based command sequences and the shared
 * conformance suites.
 */
export * from "./arbitraries.js"
export * from "./conformance/artifactStoreConformance.js"
export * from "./conformance/operationJournalConformance.js"
export * from "./conformance/workspaceConformance.js"
export * from "./conformance/workspaceFixture.js"
export * from "./faultRules.js"
export * from "./faultyArtifactStore.js"
export * from "./faultyWorkspace.js"
export * from "./forkFixtures.js"
export * from "./forkInvariants.js"
export * from "./injectCheckpoint.js"
export * from "./noBackgroundTasks.js"
export * from "./nodeProcess.js"
export * from "./properties/fileRewindProperties.js"
export * from "./properties/propertyParameters.js"
export * from "./properties/redoProperties.js"
export * from "./properties/snapshotProperties.js"
export * from "./refusals.js"
export * from "./scriptedBackgroundTasks.js"
export * from "./sessionModel.js"
export * from "./sessionModelTests.js"
export * from "./steppingClock.js"
export * from "./storeConformance.js"
export * as StoreEvents from "./storeEvents.js"
