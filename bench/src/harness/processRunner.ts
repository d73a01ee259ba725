/**
 * Baseline processes (git) are spawned by a small helper process, never by the case process
 * itself. A fork of the case process (hundreds of MB of heap, worker threads) write-protects every
 * page it has; each page the case writes afterwards takes a fault. On the bench machines an
 * in-process measurement taken right after a baseline run paid for that: a first capture of
 * 10,000 files took ~35,000 more minor faults and ~0.5 s more than the same capture after no spawn.
 * That cost belongs to the baseline (a host that shells out to git pays it after every call), not
 * to whatever the harness happens to time next.
 *
 * The helper is started once per case process, before anything is timed. Requests and replies are
 * JSON lines over two FIFOs, read and written with blocking calls, so a spawn stays as synchronous
 * as `spawnSync`. The helper times each process from its spawn call to its exit, as before. When
 * the helper cannot be started, processes are spawned here as before.
 */
import { spawn, spawnSync } from "node:child_process"
import { closeSync, constants, mkdtempSync, openSync, readSync, rmSync, writeSync } from "node:fs"
import { createRequire } from "node:module"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { performance } from "node:perf_hooks"
import { fileURLToPath } from "node:url"

export interface RunRequest {
  readonly file: string
  readonly args: ReadonlyArray<string>
  readonly cwd?: string
  readonly env?: NodeJS.ProcessEnv
  readonly maxBuffer: number
}

export interface RunReply {
  /** Spawn call to exit, in milliseconds. */
  readonly ms: number
  readonly status: number | null
  readonly stdout: string
  readonly stderr: string
  readonly error?: string
}

/** Runs one process to its end, timed: what the helper does per request, and the fallback here. */
const { runRequest } = createRequire(import.meta.url)("./processRunnerHelper.cjs") as {
  readonly runRequest: (request: RunRequest) => RunReply
}
const HELPER = fileURLToPath(new URL("./processRunnerHelper.cjs", import.meta.url))

/** How long the case process waits for the helper to open its end of the request FIFO. */
const START_TIMEOUT_MS = 10_000

const pause = (ms: number) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms)

interface Runner {
  readonly run: (request: RunRequest) => RunReply
  readonly close: () => void
}

/** Opens the request FIFO for writing once the helper is reading it; undefined after the timeout. */
const openWhenRead = (path: string): number | undefined => {
  const deadline = performance.now() + START_TIMEOUT_MS
  for (;;) {
    try {
      // Non-blocking, so a helper that never starts cannot hang the case: ENXIO until it reads.
      return openSync(path, constants.O_WRONLY | constants.O_NONBLOCK)
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "ENXIO" || performance.now() > deadline) return undefined
      pause(5)
    }
  }
}

const startRunner = (): Runner | undefined => {
  const dir = mkdtempSync(join(tmpdir(), "rewind-bench-runner-"))
  const requests = join(dir, "requests")
  const replies = join(dir, "replies")
  const removeDir = () => rmSync(dir, { recursive: true, force: true })
  if (spawnSync("mkfifo", [requests, replies]).status !== 0) {
    removeDir()
    return undefined
  }
  // Plain CommonJS: none of the case process's flags (tsx) are passed on.
  const helper = spawn(process.execPath, [HELPER, requests, replies], {
    stdio: ["ignore", "inherit", "inherit"],
  })
  helper.unref()
  const input = openWhenRead(requests)
  if (input === undefined) {
    helper.kill()
    removeDir()
    return undefined
  }
  // The helper opens the reply FIFO right after the request FIFO; this open waits for it.
  const output = openSync(replies, "r")
  removeDir()
  const chunk = Buffer.alloc(1 << 20)
  // Bytes, not text: a character may be split between two reads.
  let pending = Buffer.alloc(0)
  const write = (text: Buffer) => {
    for (let at = 0; at < text.length; ) {
      try {
        at += writeSync(input, text, at)
      } catch (error) {
        // The FIFO is full (the descriptor is non-blocking): the helper is still reading.
        if ((error as NodeJS.ErrnoException).code !== "EAGAIN") throw error
        pause(1)
      }
    }
  }
  return {
    run: (request) => {
      write(Buffer.from(`${JSON.stringify(request)}\n`))
      for (;;) {
        const newline = pending.indexOf(10)
        if (newline !== -1) {
          const reply = JSON.parse(pending.toString("utf8", 0, newline)) as RunReply
          pending = pending.subarray(newline + 1)
          return reply
        }
        const read = readSync(output, chunk, 0, chunk.length, null)
        if (read === 0) throw new Error("the bench's process runner exited")
        pending = Buffer.concat([pending, chunk.subarray(0, read)])
      }
    },
    close: () => {
      closeSync(input)
      closeSync(output)
    },
  }
}

let runner: Runner | undefined | null = null

/**
 * Starts the helper (once per process). Call it before anything is timed: its own spawn is the one
 * fork the case process pays for.
 */
export const startProcessRunner = (): void => {
  if (runner === null) runner = startRunner()
}

export const stopProcessRunner = (): void => {
  runner?.close()
  runner = null
}

/** Runs a process to its end through the helper (or here, without one), timed from spawn to exit. */
export const runProcess = (request: RunRequest): RunReply => {
  startProcessRunner()
  return runner === undefined || runner === null ? runRequest(request) : runner.run(request)
}
