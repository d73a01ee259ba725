/**
 * The CLI's conversation commands: `init` (create the store; not in the home directory or the
 * filesystem root without `--force`, workspaceRoot.ts), `sessions` (the store's sessions,
 * newest first) and `log <session>` (a session's transcript, its active branch).
 */
import { Args, Command, Options } from "@effect/cli"
import { SessionId } from "@rewind/contracts"
import { Effect } from "effect"
import { enclosingWorkspace } from "../workspaceRoot.js"
import { bold, dim, iso, oneLine, table, yellow } from "./output.js"
import { type CommonOptions, common, expect, withRewind } from "./store.js"

const force = Options.boolean("force").pipe(
  Options.withDescription("Make the workspace even in your home directory or the filesystem root"),
)

export const init = Command.make(
  "init",
  { ...common, force },
  (o: CommonOptions & { readonly force: boolean }) =>
    withRewind(
      o,
      true,
      (rewind, out) =>
        Effect.gen(function* () {
          // A workspace inside another one is separate: said, since commands run below it now find
          // this store, not the enclosing one (workspaceRoot.ts).
          const enclosing = enclosingWorkspace(rewind.workspaceRoot)
          yield* out.record("init", {
            workspace: rewind.workspaceRoot,
            dir: rewind.dir,
            ...(enclosing === undefined ? {} : { enclosingWorkspace: enclosing }),
          })
          yield* out.human(
            `Rewind store ready in ${bold(rewind.dir ?? "")} for workspace ${rewind.workspaceRoot}`,
          )
          if (enclosing !== undefined)
            yield* out.human(
              `${yellow("note")} this workspace lies inside ${enclosing}, which has its own store: it is a separate workspace, and commands run in it now use this store`,
            )
        }),
      // The store is refused at the home directory or the filesystem root unless forced (layers.ts).
      { allowBroadWorkspace: o.force },
    ),
).pipe(Command.withDescription("Create the store (.rewind) in the current or --workspace directory"))

export const sessions = Command.make("sessions", common, (o) =>
  withRewind(o, false, (rewind, out) =>
    Effect.gen(function* () {
      const all = yield* expect(rewind.listSessions())
      for (const s of all) {
        yield* out.record("session", {
          sessionId: s.sessionId,
          kind: s.kind,
          parentId: s.parentId ?? null,
          title: s.title,
          createdAt: s.createdAt,
          updatedAt: s.updatedAt,
          version: s.version,
        })
      }
      yield* out.human(
        all.length === 0
          ? dim("no sessions")
          : table(
              ["SESSION", "KIND", "CREATED", "EVENTS", "TITLE"],
              all.map((s) => [s.sessionId, s.kind, iso(s.createdAt), String(s.version), s.title]),
            ),
      )
    }),
  ),
).pipe(Command.withDescription("List the sessions in the store, newest first"))

export const log = Command.make(
  "log",
  { ...common, session: Args.text({ name: "session" }).pipe(Args.withSchema(SessionId)) },
  (o) =>
    withRewind(o, false, (rewind, out) =>
      Effect.gen(function* () {
        const entries = yield* expect(rewind.transcript(o.session))
        const rows: Array<Array<string>> = []
        for (const e of entries) {
          const text = e.parts
            .map((p) =>
              p.kind === "text" ? (p.text ?? "") : `[${p.kind}${p.toolName ? ` ${p.toolName}` : ""}]`,
            )
            .join(" ")
          yield* out.record("message", {
            messageId: e.message.id,
            turnId: e.message.turnId,
            role: e.message.role,
            status: e.message.status,
            compacted: e.compacted,
            createdAt: e.message.createdAt,
            text,
          })
          rows.push([
            e.message.id,
            e.compacted ? dim(e.message.role) : e.message.role,
            iso(e.message.createdAt),
            oneLine(text),
          ])
        }
        yield* out.human(
          rows.length === 0 ? dim("no messages") : table(["MESSAGE", "ROLE", "AT", "TEXT"], rows),
        )
      }),
    ),
).pipe(Command.withDescription("Print a session's transcript (its active branch)"))
