/**
 * The ports: only what a host or an adapter supplies (stores, workspace, journal, ids, background
 * tasks).
 */
export * from "./ArtifactStore.js"
export * from "./BackgroundTasks.js"
export * as IdGenerators from "./IdGenerator.js"
export { IdGenerator, type IdGeneratorService } from "./IdGenerator.js"
export * as OperationJournals from "./OperationJournal.js"
export {
  type DamagedOperation,
  type JournalScan,
  type OperationCompletion,
  OperationJournal,
  type OperationJournalService,
} from "./OperationJournal.js"
export * from "./SessionStore.js"
export * from "./Workspace.js"
