/**
 * The BackgroundTasks port: the host's registry of tasks a turn left running (a dev server, a long
 * test run). A conversation rewind must stop the tasks of the turns it cuts before it writes its
 * cursor, and tells the registry the new branch generation so late results can be discarded.
 */
import type { SessionId, TaskId, TaskStopFailed } from "@rewind/contracts"
import { Context, type Effect } from "effect"

export interface BackgroundTasksService {
  /** Stops a running task; succeeds if it is already gone. */
  readonly stop: (sessionId: SessionId, taskId: TaskId) => Effect.Effect<void, TaskStopFailed>
  /** Records the session's current branch generation after a conversation rewind. */
  readonly setGeneration: (sessionId: SessionId, generation: number) => Effect.Effect<void>
}

export class BackgroundTasks extends Context.Tag("@rewind/core/BackgroundTasks")<
  BackgroundTasks,
  BackgroundTasksService
>() {}
