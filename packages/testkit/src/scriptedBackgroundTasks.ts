/**
 * A scripted BackgroundTasks double for model-based tests: each task is told up front whether it
 * will refuse to stop, so a command sequence can exercise "a task that won't stop".
 */
import { type SessionId, type TaskId, TaskStopFailed } from "@rewind/contracts"
import { BackgroundTasks } from "@rewind/core"
import { Context, Effect, Layer } from "effect"

export interface ScriptedTasksControl {
  readonly script: (taskId: TaskId, willRefuseToStop: boolean) => void
  readonly wasStopped: (taskId: TaskId) => boolean
  readonly generation: (sessionId: SessionId) => number
}

export class ScriptedTasks extends Context.Tag("@rewind/testkit/ScriptedTasks")<
  ScriptedTasks,
  ScriptedTasksControl
>() {}

export const layerScriptedTasks: Layer.Layer<BackgroundTasks | ScriptedTasks> = Layer.effectContext(
  Effect.sync(() => {
    const refusing = new Set<TaskId>()
    const stopped = new Set<TaskId>()
    const generations = new Map<SessionId, number>()
    return Context.make(BackgroundTasks, {
      stop: (_sessionId, taskId) =>
        refusing.has(taskId)
          ? Effect.fail(new TaskStopFailed({ taskId, message: "scripted to refuse" }))
          : Effect.sync(() => void stopped.add(taskId)),
      setGeneration: (sessionId, generation) =>
        Effect.sync(() => void generations.set(sessionId, generation)),
    }).pipe(
      Context.add(ScriptedTasks, {
        script: (taskId, willRefuse) => void (willRefuse ? refusing.add(taskId) : refusing.delete(taskId)),
        wasStopped: (taskId) => stopped.has(taskId),
        generation: (sessionId) => generations.get(sessionId) ?? 0,
      }),
    )
  }),
)
