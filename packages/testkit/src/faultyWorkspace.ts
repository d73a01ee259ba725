/**
 * A fault-injecting Workspace: a Layer over any Workspace that fails chosen calls with a
 * `WorkspaceIoError` (code `EINJECTED`). Tests use it to prove that a rewind is all-or-nothing
 * whatever write fails, and that compensation copes with a write that happened but reported failure.
 */
import { WorkspaceIoError } from "@rewind/contracts"
import { Workspace, type WorkspaceService } from "@rewind/core"
import { Context, Effect, Layer } from "effect"
import { type FaultBook, type FaultRule, makeFaultBook } from "./faultRules.js"

export type WorkspaceOperation =
  | "read"
  | "write"
  | "createFiles"
  | "delete"
  | "stat"
  | "list"
  | "scanDirectory"
  | "readLink"
  | "symlink"
  | "discardPartialWrites"
  | "removeEmptyDirectory"
export type WorkspaceFault = FaultRule<WorkspaceOperation>
export type WorkspaceFaultControl = Omit<FaultBook<WorkspaceOperation>, "decide">

export class WorkspaceFaults extends Context.Tag("@rewind/testkit/WorkspaceFaults")<
  WorkspaceFaults,
  WorkspaceFaultControl
>() {}

const ioOperation: Record<WorkspaceOperation, WorkspaceIoError["operation"]> = {
  read: "read",
  write: "write",
  createFiles: "write",
  delete: "delete",
  stat: "stat",
  list: "scan",
  scanDirectory: "scan",
  readLink: "readlink",
  symlink: "symlink",
  discardPartialWrites: "delete",
  removeEmptyDirectory: "delete",
}

export const makeFaultyWorkspace = (
  inner: WorkspaceService,
): { readonly service: WorkspaceService; readonly control: WorkspaceFaultControl } => {
  const book = makeFaultBook<WorkspaceOperation>()
  /** What a call does once a rule has hit it: fail instead of it, or fail after it ran. */
  const faulted = <A, E>(
    rule: FaultRule<WorkspaceOperation>,
    operation: WorkspaceOperation,
    target: string,
    call: Effect.Effect<A, E>,
  ): Effect.Effect<A, E | WorkspaceIoError> => {
    const failure = new WorkspaceIoError({
      operation: ioOperation[operation],
      path: target,
      code: "EINJECTED",
      message: `injected fault: ${operation} of ${target} failed`,
    })
    return (rule.timing ?? "before") === "before"
      ? Effect.fail(failure)
      : Effect.zipRight(call, Effect.fail(failure))
  }
  const guard = <A, E>(operation: WorkspaceOperation, target: string, call: Effect.Effect<A, E>) =>
    Effect.suspend((): Effect.Effect<A, E | WorkspaceIoError> => {
      const rule = book.decide(operation, target)
      return rule === undefined ? call : faulted(rule, operation, target, call)
    })
  const service: WorkspaceService = {
    root: inner.root,
    read: (path, options) => guard("read", path, inner.read(path, options)),
    // Each path of a bulk read is one read to the fault rules (as for scanDirectories below); the
    // paths no rule hits still go to the inner workspace as one bulk read.
    readMany: (paths) =>
      Effect.suspend(() => {
        const rules = paths.map((path) => book.decide("read", path))
        const clean = paths.filter((_, i) => rules[i] === undefined)
        return Effect.gen(function* () {
          const bulk = clean.length === 0 ? [] : yield* inner.readMany(clean)
          let next = 0
          return yield* Effect.forEach(paths, (path, i) => {
            const rule = rules[i]
            return rule === undefined
              ? Effect.succeed(bulk[next++]!)
              : Effect.either(faulted(rule, "read", path, inner.read(path)))
          })
        })
      }),
    write: (path, content, options) => guard("write", path, inner.write(path, content, options)),
    // Each file of a bulk creation is one createFiles to the fault rules: the files before the
    // first one a rule hits are created (a failure midway, as on disk), then that one fails.
    createFiles: (files) =>
      Effect.suspend(() => {
        for (const [hit, file] of files.entries()) {
          const rule = book.decide("createFiles", file.path)
          if (rule === undefined) continue
          return Effect.zipRight(
            inner.createFiles(files.slice(0, hit)),
            faulted(rule, "createFiles", file.path, inner.createFiles([file])),
          )
        }
        return inner.createFiles(files)
      }),
    delete: (path) => guard("delete", path, inner.delete(path)),
    stat: (path) => guard("stat", path, inner.stat(path)),
    // Each path of a bulk stat is one stat to the fault rules, as for readMany.
    statMany: (paths) =>
      Effect.forEach(paths, (path) => Effect.either(guard("stat", path, inner.stat(path)))),
    list: (directory) => guard("list", directory ?? ".", inner.list(directory)),
    scanDirectory: (directory) => guard("scanDirectory", directory ?? ".", inner.scanDirectory(directory)),
    // Each directory of a bulk scan is one scanDirectory to the fault rules, so a rule on a path
    // hits it however the scan asks for it.
    scanDirectories: (directories) =>
      Effect.forEach(directories, (directory) =>
        Effect.either(guard("scanDirectory", directory ?? ".", inner.scanDirectory(directory))),
      ),
    readLink: (path) => guard("readLink", path, inner.readLink(path)),
    symlink: (path, target) => guard("symlink", path, inner.symlink(path, target)),
    discardPartialWrites: (path) => guard("discardPartialWrites", path, inner.discardPartialWrites(path)),
    removeEmptyDirectory: (path) => guard("removeEmptyDirectory", path, inner.removeEmptyDirectory(path)),
  }
  const { decide: _decide, ...control } = book
  return { service, control }
}

/** Wraps the Workspace below it; provides the faulty Workspace and its control. */
export const layerFaultyWorkspace: Layer.Layer<Workspace | WorkspaceFaults, never, Workspace> =
  Layer.effectContext(
    Effect.map(Workspace, (inner) => {
      const { service, control } = makeFaultyWorkspace(inner)
      return Context.make(Workspace, service).pipe(Context.add(WorkspaceFaults, control))
    }),
  )
