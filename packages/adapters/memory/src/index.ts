/**
 * @rewind/adapter-memory: in-memory implementations of the ports, for tests and for hosts that
 * keep sessions only for the life of a process.
 */

export {
  layerBackgroundTasks,
  MemoryTaskRegistry,
  makeMemoryBackgroundTasks,
  type TaskRegistryControl,
} from "./MemoryBackgroundTasks.js"
export * as MemorySessionStore from "./MemorySessionStore.js"
