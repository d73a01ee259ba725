/**
 * The HTTP server of `rewind ui`: the built app's files, `POST /rpc` (one JSON-RPC 2.0 request
 * per body, answered by the same generic server `rewind serve` runs, over the declared `Rewind`
 * operations: no second API), and `GET /events`, server-sent events saying a session changed.
 *
 * Invariants:
 * - it listens on 127.0.0.1 only; every request passes `checkRequest` (uiSecurity.ts) first, and
 *   a refused one gets a plain-text reason and nothing else;
 * - one `makeRpcServer` for the whole launch, so calls on one session run in arrival order across
 *   every tab, as for `serve`; a body over 1 MiB or not `application/json` is refused unread;
 * - live updates: the engine has no in-process event feed another process's writes would reach
 *   (agents' hooks write to the store from their own processes), so the server polls the store's
 *   session versions (`listSessions`) every `pollMs` while a client listens, and sends `change`
 *   with the versions whenever they differ;
 * - only files inside the app directory are served (no `..`, no directory listing).
 */
import { readFile } from "node:fs/promises"
import { createServer, type IncomingMessage, type ServerResponse } from "node:http"
import { extname, join, normalize, resolve, sep } from "node:path"
import { PassThrough, Writable } from "node:stream"
import { RewindOperations } from "@rewind/core"
import { Effect } from "effect"
import type { Rewind } from "../openRewind.js"
import { makeRpcServer, type Outcome } from "../server/rpcServer.js"
import { serviceImplementation } from "../server/serviceImplementation.js"
import { checkRequest, cookieName, newToken, setSecurityHeaders } from "./uiSecurity.js"

export interface UiServerOptions {
  readonly rewind: Rewind
  /** The built app (index.html and assets). */
  readonly appDir: string
  /** 0: any free port. */
  readonly port?: number
  readonly pollMs?: number
}

export interface UiServer {
  readonly url: string
  readonly port: number
  readonly token: string
  readonly close: () => Promise<void>
}

const MAX_BODY = 1024 * 1024
const TYPES: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".ico": "image/x-icon",
  ".json": "application/json",
}

const plain = (response: ServerResponse, status: number, text: string) => {
  response.writeHead(status, { "Content-Type": "text/plain; charset=utf-8" })
  response.end(`${text}\n`)
}

const readBody = (request: IncomingMessage) =>
  new Promise<string | undefined>((done, fail) => {
    const chunks: Array<Buffer> = []
    let size = 0
    request.on("data", (chunk: Buffer) => {
      size += chunk.length
      if (size > MAX_BODY) {
        done(undefined)
        request.destroy()
        return
      }
      chunks.push(chunk)
    })
    request.on("end", () => done(Buffer.concat(chunks).toString("utf8")))
    request.on("error", fail)
  })

export const startUiServer = async (options: UiServerOptions): Promise<UiServer> => {
  const token = newToken()
  const implementation = serviceImplementation(options.rewind)
  const rpc = makeRpcServer(RewindOperations, implementation)
  const appDir = resolve(options.appDir)
  const indexHtml = await readFile(join(appDir, "index.html"), "utf8").catch(() => {
    throw new Error(`the UI's files are missing (${appDir}); build the rewind package`)
  })
  const pollMs = options.pollMs ?? 500
  let port = 0

  /** One JSON-RPC request through the generic server; its answer line (progress notes are dropped). */
  const callRpc = async (body: string) => {
    const input = new PassThrough()
    const lines: Array<string> = []
    let pending = ""
    const output = new Writable({
      write(chunk, _encoding, next) {
        pending += chunk.toString()
        let nl = pending.indexOf("\n")
        while (nl >= 0) {
          lines.push(pending.slice(0, nl))
          pending = pending.slice(nl + 1)
          nl = pending.indexOf("\n")
        }
        next()
      },
    })
    input.end(`${body.replace(/\r?\n/g, " ")}\n`)
    await Effect.runPromise(rpc.serveConnection(input, output))
    return lines.find((line) => !line.includes('"method":"$/progress"')) ?? ""
  }

  // --- live updates -----------------------------------------------------------------------
  const listeners = new Set<ServerResponse>()
  let last = ""
  let timer: NodeJS.Timeout | undefined
  const poll = async () => {
    const outcome = (await Effect.runPromise(Effect.either(implementation.listSessions!()))) as
      | { _tag: "Right"; right: Outcome }
      | { _tag: "Left" }
    if (outcome._tag !== "Right" || !outcome.right.ok) return
    const versions = (outcome.right.value as ReadonlyArray<{ sessionId: string; version: number }>).map(
      (s) => [s.sessionId, s.version],
    )
    const now = JSON.stringify(versions)
    if (now === last) return
    last = now
    for (const listener of listeners) listener.write(`event: change\ndata: ${now}\n\n`)
  }
  const schedule = () => {
    timer = setTimeout(() => {
      void poll().finally(() => {
        if (listeners.size > 0) schedule()
        else timer = undefined
      })
    }, pollMs)
  }
  const listen = (request: IncomingMessage, response: ServerResponse) => {
    response.writeHead(200, { "Content-Type": "text/event-stream; charset=utf-8", Connection: "keep-alive" })
    response.write(`retry: 2000\nevent: hello\ndata: ${last || "[]"}\n\n`)
    listeners.add(response)
    request.on("close", () => listeners.delete(response))
    if (timer === undefined) schedule()
  }

  // --- files ------------------------------------------------------------------------------
  const serveFile = async (pathname: string, response: ServerResponse) => {
    if (pathname === "/" || pathname === "/index.html") {
      response.writeHead(200, { "Content-Type": TYPES[".html"]! })
      response.end(indexHtml.replace("__REWIND_TOKEN__", token))
      return
    }
    const file = normalize(join(appDir, decodeURIComponent(pathname)))
    if (!file.startsWith(appDir + sep)) return plain(response, 404, "not found")
    const content = await readFile(file).catch(() => undefined)
    if (content === undefined) return plain(response, 404, "not found")
    response.writeHead(200, { "Content-Type": TYPES[extname(file)] ?? "application/octet-stream" })
    response.end(content)
  }

  const handle = async (request: IncomingMessage, response: ServerResponse) => {
    setSecurityHeaders(response)
    const url = new URL(request.url ?? "/", "http://127.0.0.1")
    const verdict = checkRequest(request, url, port, token)
    if (!verdict.ok) return plain(response, verdict.status, verdict.reason)
    if (verdict.viaQuery) {
      // The first load: the token moves into a cookie and out of the address bar.
      response.writeHead(303, {
        "Set-Cookie": `${cookieName(port)}=${token}; HttpOnly; SameSite=Strict; Path=/`,
        Location: "/",
      })
      response.end()
      return
    }
    if (request.method === "POST" && url.pathname === "/rpc") {
      if (!(request.headers["content-type"] ?? "").startsWith("application/json"))
        return plain(response, 415, "POST /rpc takes application/json")
      const body = await readBody(request)
      if (body === undefined) return plain(response, 413, `a request body is at most ${MAX_BODY} bytes`)
      const answer = await callRpc(body)
      response.writeHead(200, { "Content-Type": "application/json" })
      response.end(answer)
      return
    }
    if (request.method !== "GET" && request.method !== "HEAD") return plain(response, 405, "not allowed")
    if (url.pathname === "/events") return listen(request, response)
    return serveFile(url.pathname, response)
  }

  const server = createServer((request, response) => {
    handle(request, response).catch((error: unknown) => {
      if (!response.headersSent) plain(response, 500, error instanceof Error ? error.message : String(error))
      else response.end()
    })
  })
  await new Promise<void>((done, fail) => {
    server.once("error", fail)
    server.listen(options.port ?? 0, "127.0.0.1", () => done())
  })
  const address = server.address()
  port = typeof address === "object" && address !== null ? address.port : 0
  return {
    url: `http://127.0.0.1:${port}/?token=${token}`,
    port,
    token,
    close: () =>
      new Promise<void>((done) => {
        if (timer !== undefined) clearTimeout(timer)
        for (const listener of listeners) listener.end()
        server.close(() => done())
        server.closeAllConnections()
      }),
  }
}
