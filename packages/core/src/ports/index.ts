/**
 * The ports: only what a host or an adapter supplies (stores, workspace, journal, ids, background
 * tasks, the store's integrity check). Declarations only: the implementations are in the adapters.
 */
export * from "./ArtifactStore.js"
export * from "./BackgroundTasks.js"
export * as IdGenerators from "./IdGenerator.js"
export { IdGenerator, type IdGeneratorService } from "./IdGenerator.js"
export {
  type DamagedOperation,
  type JournalScan,
  type OperationCompletion,
  OperationJournal,
  type OperationJournalService,
} from "./OperationJournal.js"
export * from "./SessionStore.js"
export * from "./StoreDoctor.js"
export * from "./StoreIntegrity.js"
export * from "./Workspace.js"
export * from "./WorkspaceChanges.js"
export * from "./Workspaces.js"
