/**
 * The one gate every request of `rewind ui` passes before anything else runs: the launch token,
 * the `Host` and `Origin` checks, and the response headers every answer carries.
 *
 * Invariants:
 * - the token is 32 random bytes per launch; a request carries it in the cookie the first page
 *   load sets (from `?token=` in the printed URL), and a state-changing request (every POST)
 *   must also carry it in the `X-Rewind-Token` header, which a cross-site form or image cannot set;
 * - `Host` must be `127.0.0.1:<port>` or `localhost:<port>` exactly (a DNS-rebinding page sends
 *   its own host name); `Origin`, when present, must be one of the UI's own two origins;
 * - comparisons are constant-time; no CORS header is ever sent, so no other origin reads an answer;
 * - every answer has a CSP of `default-src 'self'`, `nosniff`, no referrer and no caching.
 */
import { randomBytes, timingSafeEqual } from "node:crypto"
import type { IncomingMessage, ServerResponse } from "node:http"

export const TOKEN_HEADER = "x-rewind-token"

export const newToken = () => randomBytes(32).toString("hex")

/** The cookie name carries the port: cookies are not port-scoped, two launches must not clash. */
export const cookieName = (port: number) => `rewind_ui_${port}`

const sameSecret = (given: string | undefined, token: string) => {
  if (given === undefined) return false
  const a = Buffer.from(given)
  const b = Buffer.from(token)
  return a.length === b.length && timingSafeEqual(a, b)
}

const cookieValue = (header: string | undefined, name: string): string | undefined => {
  if (header === undefined) return undefined
  for (const pair of header.split(";")) {
    const eq = pair.indexOf("=")
    if (eq > 0 && pair.slice(0, eq).trim() === name) return pair.slice(eq + 1).trim()
  }
  return undefined
}

export type Verdict =
  | { readonly ok: true; readonly viaQuery: boolean }
  | { readonly ok: false; readonly status: number; readonly reason: string }

/** Whether a request may be served; `viaQuery` when it is authorised only by `?token=`. */
export const checkRequest = (request: IncomingMessage, url: URL, port: number, token: string): Verdict => {
  const hosts = [`127.0.0.1:${port}`, `localhost:${port}`]
  const host = request.headers.host
  if (host === undefined || !hosts.includes(host)) {
    return { ok: false, status: 421, reason: `the Host header must be ${hosts.join(" or ")}` }
  }
  const origin = request.headers.origin
  if (origin !== undefined && !hosts.some((h) => origin === `http://${h}`)) {
    return { ok: false, status: 403, reason: "cross-origin requests are refused" }
  }
  const fromCookie = sameSecret(cookieValue(request.headers.cookie, cookieName(port)), token)
  const header = request.headers[TOKEN_HEADER]
  const fromHeader = sameSecret(typeof header === "string" ? header : undefined, token)
  if (request.method !== "GET" && request.method !== "HEAD") {
    // A state-changing request: the header is required (a cookie alone is what a forged form has).
    return fromHeader
      ? { ok: true, viaQuery: false }
      : { ok: false, status: 403, reason: `a POST needs the launch token in the ${TOKEN_HEADER} header` }
  }
  if (fromCookie || fromHeader) return { ok: true, viaQuery: false }
  if (sameSecret(url.searchParams.get("token") ?? undefined, token)) return { ok: true, viaQuery: true }
  return { ok: false, status: 403, reason: "open the URL rewind ui printed (it carries this launch's token)" }
}

/** The headers every answer carries, whatever it is. */
export const setSecurityHeaders = (response: ServerResponse) => {
  response.setHeader(
    "Content-Security-Policy",
    "default-src 'self'; img-src 'self' data:; object-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  )
  response.setHeader("X-Content-Type-Options", "nosniff")
  response.setHeader("Referrer-Policy", "no-referrer")
  response.setHeader("X-Frame-Options", "DENY")
  response.setHeader("Cache-Control", "no-store")
}
