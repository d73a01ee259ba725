// A memory environment for the file-rewind program tests: workspace, stores and fault controls
// that outlive one layer, so a test can damage a blob, inject a failure or "reopen" the stores.

import {
  layerBackgroundTasks,
  MemoryArtifactStore,
  MemoryFileSystem,
  MemoryOperationJournal,
  MemorySessionStore,
  MemoryWorkspace,
} from "@rewind/adapter-memory"
import type { MessageId, SessionId, TurnId, WorkspacePath } from "@rewind/contracts"
import {
  ArtifactStore,
  appendReply,
  appendUserMessage,
  createSession,
  IdGenerators,
  OperationJournal,
  recordFileMutation,
  Workspace,
  type WorkspaceService,
} from "@rewind/core"
import { makeFaultyArtifactStore, makeFaultyWorkspace } from "@rewind/testkit"
import { Effect, Layer, Option } from "effect"

export const ROOT = "/home/dev/project"
export const OUTSIDE = "/home/dev/outside"

export const makeEnv = () => {
  const fs = new MemoryFileSystem()
  fs.writeFile(`${OUTSIDE}/secret.txt`, "do not touch\n")
  const storeData = MemorySessionStore.makeMemoryStoreData()
  const artifactData = MemoryArtifactStore.makeMemoryArtifactData()
  const workspace = makeFaultyWorkspace(MemoryWorkspace.make({ fs, root: ROOT }))
  const artifacts = makeFaultyArtifactStore(MemoryArtifactStore.makeMemoryArtifactStore(artifactData))
  const journal = Effect.runSync(MemoryOperationJournal.make())
  /** A fresh set of layers over the same data: what a process restart would see. */
  const layer = () =>
    Layer.mergeAll(
      MemorySessionStore.layerFrom(storeData),
      Layer.succeed(ArtifactStore, artifacts.service),
      Layer.succeed(Workspace, workspace.service),
      Layer.succeed(OperationJournal, journal),
      layerBackgroundTasks,
      IdGenerators.layerSequential("t"),
    )
  const text = (path: string): string | undefined => {
    const node = fs.node(`${ROOT}/${path}`)
    return node?.kind === "file" ? new TextDecoder().decode(node.content) : undefined
  }
  const files = (): Record<string, string> =>
    Object.fromEntries(
      fs
        .describe(ROOT)
        .filter(([, d]) => d.startsWith("file "))
        .map(([p, d]) => [p.slice(ROOT.length + 1), d.slice(d.indexOf(" ", 5) + 1)]),
    )
  const outsideAccesses = () =>
    fs.accesses.map((a) => a.path).filter((p) => p !== ROOT && !p.startsWith(`${ROOT}/`))
  return { fs, storeData, artifactData, workspace, artifacts, journal, layer, text, files, outsideAccesses }
}

export type Env = ReturnType<typeof makeEnv>

const encode = (s: string) => new TextEncoder().encode(s)

export const newSession = createSession({ title: "files", cwd: ROOT }).pipe(Effect.map((s) => s.id))

export const userTurn = (sessionId: SessionId, text: string) => appendUserMessage(sessionId, { text })

export const reply = (sessionId: SessionId, turnId: TurnId) =>
  appendReply(sessionId, { turnId, parts: [{ kind: "text", text: "done" }] })

/**
 * What a host does for one tool write: read the file, write it, then record the checkpoint. The
 * write goes to the real workspace (no faults), like a tool that succeeded.
 */
export const agentWrite = (
  env: Env,
  sessionId: SessionId,
  turnId: TurnId,
  path: string,
  content: string | null,
  toolName = "Write",
) =>
  Effect.gen(function* () {
    const ws: WorkspaceService = MemoryWorkspace.make({ fs: env.fs, root: ROOT })
    const current = yield* ws.read(path as WorkspacePath)
    const before = Option.match(current, { onNone: () => null, onSome: (f) => f.content })
    if (content === null) yield* ws.delete(path as WorkspacePath)
    else yield* ws.write(path as WorkspacePath, encode(content))
    const result = yield* recordFileMutation({
      sessionId,
      turnId,
      path,
      toolName,
      before,
      after: content === null ? null : encode(content),
    })
    if (!result.recorded) return yield* Effect.dieMessage(`not recorded: ${result.warning.message}`)
    return result.checkpoint
  })

export type { MessageId }
