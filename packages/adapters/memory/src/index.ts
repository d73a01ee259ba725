/**
 * @rewind/adapter-memory: in-memory implementations of the ports, for tests and for hosts that
 * keep sessions only for the life of a process.
 */

export * as MemoryArtifactStore from "./MemoryArtifactStore.js"
export {
  layerBackgroundTasks,
  MemoryTaskRegistry,
  makeMemoryBackgroundTasks,
  type TaskRegistryControl,
} from "./MemoryBackgroundTasks.js"
export { MemoryFileSystem, type MemoryFsAccess, type MemoryNode } from "./MemoryFileSystem.js"
export * as MemoryOperationJournal from "./MemoryOperationJournal.js"
export * as MemorySessionStore from "./MemorySessionStore.js"
export * as MemoryWorkspace from "./MemoryWorkspace.js"
