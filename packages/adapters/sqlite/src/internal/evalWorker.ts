/**
 * The life of the store's helper threads (checkpoints, compression): a worker started from a
 * CommonJS source string, and its end. Both threads start the same way and must end the same
 * way, before the store's connection closes.
 */
import { Worker } from "node:worker_threads"

/** How long an ending thread may take to finish what it is doing before it is terminated. */
const END_TIMEOUT_MILLIS = 5_000

/**
 * A worker running `source` (CommonJS: `require` works) with `workerData`. Unref'd: never what
 * keeps a process alive. It inherits none of the host's `execArgv`: its code needs no loader or
 * flag (a tsx loader costs ~60 ms of start).
 */
export const startEvalWorker = (source: string, workerData: unknown): Worker => {
  const worker = new Worker(source, { eval: true, execArgv: [], workerData })
  worker.unref()
  return worker
}

/**
 * Ends a worker and waits for it to exit: with `closeMessage`, the worker is asked to close what
 * it holds and exit on its own; without, it is terminated at once. A worker still running after
 * END_TIMEOUT_MILLIS is terminated.
 */
export const endWorker = async (worker: Worker, closeMessage?: unknown): Promise<void> => {
  const exited = new Promise<"exited">((resolve) => worker.once("exit", () => resolve("exited")))
  if (closeMessage === undefined) void worker.terminate()
  else worker.postMessage(closeMessage)
  let timer: ReturnType<typeof setTimeout> | undefined
  const timedOut = new Promise<"timeout">((resolve) => {
    timer = setTimeout(() => resolve("timeout"), END_TIMEOUT_MILLIS)
  })
  const outcome = await Promise.race([exited, timedOut])
  clearTimeout(timer)
  if (outcome === "timeout") await worker.terminate()
}
