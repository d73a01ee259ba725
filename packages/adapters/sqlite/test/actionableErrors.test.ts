// Failures a person can fix are said so (issue 21 item 10): a full disk is "full", not "disk I/O
// error", and a store this process cannot write says it is read-only before a write fails.
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import type { SessionId } from "@rewind/contracts"
import { StoreEvents } from "@rewind/testkit"
import Database from "better-sqlite3"
import { Effect } from "effect"
import { SqliteSessionStore } from "../src/index.js"
import { toStoreError } from "../src/internal/sqliteErrors.js"
import { tempDir } from "./tempStore.js"

const { sessionCreated, textPart } = StoreEvents

/** Mounts (as root) a filesystem for the scope; undefined where this process may not mount. */
const mounted = (dir: string, args: ReadonlyArray<string>) =>
  Effect.acquireRelease(
    Effect.sync(() => {
      try {
        execFileSync("mount", [...args, dir], { stdio: "pipe" })
        return true
      } catch (error) {
        console.info(`[skip] cannot mount ${String(error).slice(0, 200)}`)
        console.info(`[skip] cannot mount ${args.join(" ")} here (needs root): tested by injection only`)
        return false
      }
    }),
    (ok) => Effect.sync(() => (ok ? execFileSync("umount", [dir], { stdio: "ignore" }) : undefined)),
  )

describe("actionable store errors", () => {
  it("SQLITE_FULL says the disk is full and what to do", () => {
    const error = toStoreError(
      "append",
      new Database.SqliteError("database or disk is full", "SQLITE_FULL"),
      "/s/r.db",
    )
    expect(error.message).toMatch(/disk holding \/s\/r\.db is full.*free some space/)
  })

  it("SQLITE_READONLY says the store is read-only and what to do", () => {
    const error = toStoreError(
      "append",
      new Database.SqliteError("attempt to write a readonly database", "SQLITE_READONLY"),
      "/s/r.db",
    )
    expect(error.message).toMatch(/\/s\/r\.db is read-only.*make the file and its directory writable/)
  })

  it.scoped("a write on a really full disk fails saying the disk is full", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir
      const mount = path.join(dir, "small")
      fs.mkdirSync(mount)
      if (!(yield* mounted(mount, ["-t", "tmpfs", "-o", "size=1m", "tmpfs"]))) return
      const file = path.join(mount, "rewind.db")
      const id = "ses_full" as SessionId
      const result = yield* Effect.scoped(
        Effect.gen(function* () {
          const store = yield* SqliteSessionStore.make({ path: file, idleCheckpointMillis: 0 })
          yield* store.sessionStore.append({
            sessionId: id,
            expectedVersion: 0,
            events: [sessionCreated(id)],
            at: 1,
          })
          // Fill what is left of the disk.
          const filler = fs.openSync(path.join(mount, "filler"), "w")
          try {
            for (;;) fs.writeSync(filler, Buffer.alloc(64 * 1024))
          } catch {
            // ENOSPC: the disk is full now.
          } finally {
            fs.closeSync(filler)
          }
          return yield* Effect.either(
            store.sessionStore.append({
              sessionId: id,
              expectedVersion: 1,
              events: Array.from({ length: 50 }, (_, n) => textPart(0, n, "x".repeat(20_000))),
              at: 2,
            }),
          )
        }),
      )
      expect(result._tag).toBe("Left")
      if (result._tag === "Left") {
        expect(result.left.message).toMatch(/is full.*free some space/)
        expect(result.left.message).not.toMatch(/^[^(]*disk I\/O error/)
      }
    }),
  )

  it.scoped("readOnly says why a store cannot be written, and nothing for a writable one", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir
      const storeDir = path.join(dir, "store")
      fs.mkdirSync(storeDir)
      const file = path.join(storeDir, "rewind.db")
      yield* Effect.scoped(
        Effect.flatMap(SqliteSessionStore.make({ path: file }), (store) =>
          Effect.map(store.readOnly, (reason) => expect(reason).toBeUndefined()),
        ),
      )
      // As root a file mode does not stop a write: bind-mount the file over itself read-only.
      if (process.getuid?.() === 0) {
        if (!(yield* mounted(file, ["--bind", "-o", "ro", file]))) return
      } else {
        fs.chmodSync(file, 0o444)
      }
      const reason = yield* Effect.scoped(
        Effect.flatMap(SqliteSessionStore.make({ path: file }), (s) => s.readOnly),
      )
      expect(reason).toMatch(/not writable \((EROFS|EACCES)\).*every write/)
    }),
  )
})
