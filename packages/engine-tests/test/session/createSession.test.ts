// createSession with a parent: only an existing parent may be named (issue 21 item 8).
import { describe, expect, it } from "@effect/vitest"
import type { SessionId } from "@rewind/contracts"
import { createSession, SessionStore } from "@rewind/core"
import { expectRefusal } from "@rewind/testkit"
import { Effect } from "effect"
import { runFork } from "../support/forkTestLayer.js"

describe("createSession with a parentId", () => {
  it.effect("refuses a parent that does not exist and writes nothing", () =>
    runFork(
      Effect.gen(function* () {
        const refusal = yield* expectRefusal(
          createSession({
            sessionId: "ses_child" as SessionId,
            title: "t",
            cwd: "/w",
            parentId: "ses_nope" as SessionId,
          }),
          "session_not_found",
        )
        expect(refusal.message).toContain("ses_nope")
        const store = yield* SessionStore
        expect(yield* store.version("ses_child" as SessionId)).toBe(0)
        expect(yield* store.listSessions()).toEqual([])
      }),
    ),
  )

  it.effect("accepts a parent that exists", () =>
    runFork(
      Effect.gen(function* () {
        const parent = yield* createSession({ title: "p", cwd: "/w" })
        const child = yield* createSession({ title: "c", cwd: "/w", kind: "subagent", parentId: parent.id })
        expect(child.parentId).toBe(parent.id)
        const store = yield* SessionStore
        expect((yield* store.listSessions()).map((s) => s.sessionId).sort()).toEqual(
          [parent.id, child.id].sort(),
        )
      }),
    ),
  )
})
