/**
 * The workspace watcher's flush: a cookie file made in the cookie directory (inside the store) and
 * the inotify queue drained until the cookie's event is in, proof that the watch is alive and that
 * everything queued before it has been read. It waits on the kernel, so it runs on the real clock
 * whatever clock the caller's program runs on; any doubt stops the watch (its next capture is then
 * a full scan).
 */
import { closeSync, openSync, unlinkSync } from "node:fs"
import { join } from "node:path"
import { Clock, Duration, Effect } from "effect"

/** Real time: the flush waits on the kernel, whatever clock the caller's program runs on (tests). */
export const liveClock = Clock.make()

export const messageOf = (e: unknown) => (e instanceof Error ? e.message : String(e))

/**
 * Makes cookie `name` and drains until it is seen: proof that the watch is alive and everything
 * queued before it has been read. False (the watcher stopped, with the reason) when the cookie
 * cannot be made, the watch stops meanwhile, or the cookie does not come back in time.
 */
export const flushThrough = (
  name: string,
  watch: {
    readonly cookieDirectory: string
    readonly flushTimeout: number
    readonly drain: () => ReadonlyArray<string>
    readonly active: () => boolean
    readonly stop: (reason: string, retryAtMs: number) => void
  },
) =>
  Effect.withClock(
    Effect.gen(function* () {
      const path = join(watch.cookieDirectory, name)
      try {
        closeSync(openSync(path, "w"))
        unlinkSync(path)
      } catch (e) {
        watch.stop(`the flush cookie could not be written: ${messageOf(e)}`, 0)
        return false
      }
      const deadline = (yield* Clock.currentTimeMillis) + watch.flushTimeout
      for (;;) {
        if (watch.drain().includes(name)) return true
        if (!watch.active()) return false
        if ((yield* Clock.currentTimeMillis) > deadline) {
          watch.stop("the watcher did not report its flush cookie in time", 0)
          return false
        }
        yield* Effect.sleep(Duration.millis(1))
      }
    }),
    liveClock,
  )
