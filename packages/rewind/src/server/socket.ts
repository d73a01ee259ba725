/**
 * `rewind serve --socket <path>`: the JSON-RPC server on a Unix domain socket, one connection per
 * client, all sharing the server's per-session order.
 *
 * Invariants:
 * - the socket is created mode 0600 (under umask 0177, then chmod) in a directory owned by this
 *   user that neither group nor others can write; otherwise the server refuses to start (a
 *   missing directory is created mode 0700 first, so it passes);
 * - an existing path is taken over only when it is a socket owned by this user that nobody
 *   answers on (a crashed server's leftover); a live socket ("another server is listening"), a
 *   non-socket or someone else's file refuses to start, touching nothing;
 * - on stop, the listener closes, every connection's calls are interrupted, and the socket file
 *   is removed only if it is still the one this server created (same inode);
 * - a client that goes away (closed or crashed) ends only its own connection; its calls finish
 *   (their answers dropped), so no session stays reserved.
 *   The check-then-listen on a stale path has a window in which two servers starting at the same
 *   instant could both replace it; `listen` itself refuses an address already bound.
 * - with `idleExitMs`, the server stops once no connection has been open (none served, none with
 *   a call still running) for that long, counted from the start and from each last connection's
 *   end: an auto-started server (the hook's) does not outlive its agent session for long.
 */
import { chmod, lstat, mkdir, readFile, stat, unlink, writeFile } from "node:fs/promises"
import { createConnection, createServer, type Server, type Socket } from "node:net"
import { dirname, resolve } from "node:path"
import { Effect, FiberSet } from "effect"
import { CliFailure, ExitCode } from "../cli/output.js"
import type { RpcServer } from "./rpcServer.js"
import { serverInfoPath } from "./workspaceSocket.js"

const refused = (message: string) =>
  new CliFailure({ code: ExitCode.failed, message: `rewind serve: ${message}`, reason: "socket_refused" })

const errno = (error: unknown) => (error as NodeJS.ErrnoException | undefined)?.code

/** Whether something accepts connections on `path`. */
const answers = (path: string) =>
  new Promise<boolean>((done) => {
    const probe = createConnection(path)
    probe.once("connect", () => {
      probe.destroy()
      done(true)
    })
    probe.once("error", () => done(false))
  })

/** Refuses a path this server must not use; removes a stale socket of ours. */
export const prepareSocketPath = (path: string): Effect.Effect<void, CliFailure> =>
  Effect.tryPromise({
    try: async () => {
      const uid = process.getuid?.()
      const dir = dirname(path)
      // A missing directory is made, private: the path `rewind status` prints (what an auto-started
      // server would use) names one that exists only once a server has run. A directory that was
      // already there is taken as it is and checked below like any other.
      await mkdir(dir, { recursive: true, mode: 0o700 }).catch(() => undefined)
      const d = await stat(dir).catch((error) => {
        throw refused(`the socket's directory ${dir} cannot be used (${errno(error) ?? String(error)})`)
      })
      if (!d.isDirectory()) throw refused(`${dir} is not a directory`)
      if (uid !== undefined && d.uid !== uid) {
        throw refused(
          `the socket's directory ${dir} belongs to uid ${d.uid}, not to you (uid ${uid}); use a directory of your own`,
        )
      }
      if ((d.mode & 0o022) !== 0) {
        throw refused(
          `the socket's directory ${dir} is writable by others (mode ${(d.mode & 0o777).toString(8)}); use a directory only you can write (chmod 700)`,
        )
      }
      const existing = await lstat(path).catch((error) => {
        if (errno(error) === "ENOENT") return undefined
        throw refused(`cannot inspect ${path} (${errno(error) ?? String(error)})`)
      })
      if (existing === undefined) return
      if (uid !== undefined && existing.uid !== uid) {
        throw refused(`${path} belongs to uid ${existing.uid}, not to you (uid ${uid}); it was left alone`)
      }
      if (!existing.isSocket()) throw refused(`${path} exists and is not a socket; it was left alone`)
      if (await answers(path)) {
        throw refused(`another server is listening on ${path}; stop it first or choose another --socket path`)
      }
      // A crashed server's leftover: nobody answers on it.
      await unlink(path)
    },
    catch: (error) =>
      error instanceof CliFailure
        ? error
        : refused(`cannot prepare ${path}: ${error instanceof Error ? error.message : String(error)}`),
  })

/**
 * A listening server, and the connections it accepted before anyone served them: a client may
 * connect as soon as the socket file exists, and node drops a `connection` nobody listens to.
 */
interface Listening {
  readonly server: Server
  readonly early: Array<Socket>
  readonly hold: (socket: Socket) => void
}

const listen = (path: string) =>
  Effect.tryPromise({
    try: () =>
      new Promise<Listening>((done, fail) => {
        const server = createServer({ allowHalfOpen: true })
        const early: Array<Socket> = []
        const hold = (socket: Socket) => {
          early.push(socket)
        }
        server.on("connection", hold)
        const previous = process.umask(0o177)
        server.once("error", (error) => {
          process.umask(previous)
          fail(error)
        })
        server.listen(path, () => {
          process.umask(previous)
          done({ server, early, hold })
        })
      }),
    catch: (error) =>
      refused(
        errno(error) === "EADDRINUSE"
          ? `another server is listening on ${path}`
          : `cannot listen on ${path}: ${error instanceof Error ? error.message : String(error)}`,
      ),
  })

/**
 * Counts the connections being served and completes once none has been for `idleMs`
 * (never, without `idleMs`).
 */
const makeIdleWatch = (idleMs: number | undefined) => {
  let open = 0
  let timer: NodeJS.Timeout | undefined
  let fire: (() => void) | undefined
  const arm = () => {
    if (idleMs === undefined || fire === undefined) return
    clearTimeout(timer)
    timer = setTimeout(fire, idleMs)
  }
  return {
    opened: () => {
      open++
      clearTimeout(timer)
    },
    closed: () => {
      open--
      if (open === 0) arm()
    },
    idle:
      idleMs === undefined
        ? Effect.never
        : Effect.async<void>((resume) => {
            fire = () => resume(Effect.void)
            if (open === 0) arm()
            return Effect.sync(() => clearTimeout(timer))
          }),
  }
}

export interface ServeSocketOptions {
  /** Stop after this long without a connection (see the module comment). */
  readonly idleExitMs?: number
}

/** Serves `server` on the socket at `path` until `stop` completes (or the server is idle). */
export const serveSocket = <A>(
  server: RpcServer,
  socketPath: string,
  stop: Effect.Effect<A>,
  options: ServeSocketOptions = {},
) =>
  Effect.gen(function* () {
    const path = resolve(socketPath)
    yield* prepareSocketPath(path)
    const { server: listener, early, hold } = yield* listen(path)
    const created = yield* Effect.promise(async () => {
      await chmod(path, 0o600)
      return (await lstat(path)).ino
    })
    // Who listens, for `rewind status` (read by hooks/hookServerStatus.ts); removed at stop.
    const info = serverInfoPath(path)
    yield* Effect.promise(() =>
      writeFile(
        info,
        JSON.stringify({
          pid: process.pid,
          socket: path,
          idleExitMs: options.idleExitMs ?? null,
          startedAt: Date.now(),
        }),
        { mode: 0o600 },
      ).catch(() => undefined),
    )
    // For people and for scripts waiting for the server to be ready.
    process.stderr.write(`rewind serve: listening on ${path}\n`)
    yield* Effect.scoped(
      Effect.gen(function* () {
        const connections = yield* FiberSet.make()
        const run = yield* FiberSet.runtime(connections)<never>()
        const watch = makeIdleWatch(options.idleExitMs)
        const accept = (socket: Socket) => {
          socket.on("error", () => socket.destroy())
          watch.opened()
          run(
            server.serveConnection(socket, socket).pipe(
              Effect.ensuring(
                Effect.sync(() => {
                  if (!socket.destroyed) socket.end()
                  watch.closed()
                }),
              ),
            ),
          )
        }
        listener.off("connection", hold)
        listener.on("connection", accept)
        for (const socket of early.splice(0)) accept(socket)
        yield* Effect.raceFirst(Effect.asVoid(stop), watch.idle)
        // Stop accepting; closing the scope then interrupts every connection's calls.
        listener.close()
      }),
    )
    yield* Effect.promise(async () => {
      const now = await lstat(path).catch(() => undefined)
      if (now !== undefined && now.ino === created) await unlink(path).catch(() => undefined)
      const written = await readFile(info, "utf8").catch(() => "")
      if (written.includes(`"pid":${process.pid},`)) await unlink(info).catch(() => undefined)
    })
  })
