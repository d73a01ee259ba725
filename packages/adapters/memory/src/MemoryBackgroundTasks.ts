/**
 * An in-memory BackgroundTasks registry. Hosts that run tasks in-process can use it directly;
 * tests use `refuseToStop` to model a task that cannot be stopped.
 */
import { type SessionId, type TaskId, TaskStopFailed } from "@rewind/contracts"
import { BackgroundTasks, type BackgroundTasksService } from "@rewind/core"
import { Context, Effect, Layer } from "effect"

export interface TaskRegistryControl {
  /** Registers a running task; `stop` may be given to run when it is stopped. */
  readonly register: (
    taskId: TaskId,
    options?: { readonly refuseToStop?: boolean; readonly stop?: () => void },
  ) => void
  readonly refuseToStop: (taskId: TaskId, refuse: boolean) => void
  readonly isRunning: (taskId: TaskId) => boolean
  readonly generation: (sessionId: SessionId) => number
  readonly stopped: () => ReadonlyArray<TaskId>
}

export class MemoryTaskRegistry extends Context.Tag("@rewind/adapter-memory/MemoryTaskRegistry")<
  MemoryTaskRegistry,
  TaskRegistryControl
>() {}

export const makeMemoryBackgroundTasks = (): {
  service: BackgroundTasksService
  control: TaskRegistryControl
} => {
  const tasks = new Map<TaskId, { running: boolean; refuseToStop: boolean; stop?: () => void }>()
  const generations = new Map<SessionId, number>()
  const stoppedLog: Array<TaskId> = []
  const service: BackgroundTasksService = {
    stop: (_sessionId, taskId) =>
      Effect.suspend(() => {
        const task = tasks.get(taskId)
        if (task === undefined || !task.running) return Effect.void
        if (task.refuseToStop) {
          return Effect.fail(
            new TaskStopFailed({ taskId, message: "the task did not respond to the stop request" }),
          )
        }
        task.stop?.()
        task.running = false
        stoppedLog.push(taskId)
        return Effect.void
      }),
    setGeneration: (sessionId, generation) => Effect.sync(() => void generations.set(sessionId, generation)),
  }
  const control: TaskRegistryControl = {
    register: (taskId, options) =>
      void tasks.set(taskId, {
        running: true,
        refuseToStop: options?.refuseToStop ?? false,
        ...(options?.stop === undefined ? {} : { stop: options.stop }),
      }),
    refuseToStop: (taskId, refuse) => {
      const task = tasks.get(taskId)
      if (task !== undefined) task.refuseToStop = refuse
    },
    isRunning: (taskId) => tasks.get(taskId)?.running ?? false,
    generation: (sessionId) => generations.get(sessionId) ?? 0,
    stopped: () => [...stoppedLog],
  }
  return { service, control }
}

/** Provides both the BackgroundTasks port and the registry's control surface for tests. */
export const layerBackgroundTasks: Layer.Layer<BackgroundTasks | MemoryTaskRegistry> = Layer.effectContext(
  Effect.sync(() => {
    const { service, control } = makeMemoryBackgroundTasks()
    return Context.make(BackgroundTasks, service).pipe(Context.add(MemoryTaskRegistry, control))
  }),
)
