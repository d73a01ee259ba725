/**
 * The memory Workspace: the shared confined workspace over a `MemoryFileSystem`, rooted at a
 * directory of it. Everything outside the root exists too, so escapes can be tested for real.
 */
import { makeConfinedWorkspace, Workspace, type WorkspaceService } from "@rewind/core"
import { Layer } from "effect"
import { MemoryFileSystem } from "./MemoryFileSystem.js"

export interface MemoryWorkspaceOptions {
  readonly fs?: MemoryFileSystem
  /** Absolute and normalised; created if missing. Defaults to `/workspace`. */
  readonly root?: string
}

export const DEFAULT_ROOT = "/workspace"

export const make = (options: MemoryWorkspaceOptions = {}): WorkspaceService => {
  const fs = options.fs ?? new MemoryFileSystem()
  const root = options.root ?? DEFAULT_ROOT
  fs.mkdirp(root)
  return makeConfinedWorkspace(root, fs.primitives())
}

/** A memory workspace over a fresh filesystem, or over the one given. */
export const layer = (options: MemoryWorkspaceOptions = {}): Layer.Layer<Workspace> =>
  Layer.sync(Workspace, () => make(options))
