/**
 * What a Workspace adapter's tests hand to the shared suites: the workspace itself, raw setup that
 * bypasses it (to plant symlinks and files the workspace would refuse to create), and a view of
 * what lies outside the root so a test can prove nothing there was read or written.
 */
import type { WorkspaceService } from "@rewind/core"
import type { Effect } from "effect"

export interface WorkspaceFixture {
  readonly workspace: WorkspaceService
  /** Creates a file inside the root, parents included, without going through the workspace. */
  readonly plantFile: (path: string, content: string, mode?: number) => Effect.Effect<void>
  readonly plantDirectory: (path: string) => Effect.Effect<void>
  readonly plantSymlink: (path: string, target: string) => Effect.Effect<void>
  /** Removes an entry inside the root (a directory with everything under it), bypassing the workspace. */
  readonly removeRaw: (path: string) => Effect.Effect<void>
  /** Creates a FIFO inside the root, when the platform can. */
  readonly plantFifo?: (path: string) => Effect.Effect<void>
  /** Reads a file inside the root without going through the workspace; undefined when absent. */
  readonly readRaw: (path: string) => Effect.Effect<string | undefined>
  /** Absolute path of a directory outside the root that holds `secret.txt`. */
  readonly outside: string
  /** The same directory as a relative symlink target from the root (e.g. `../outside`). */
  readonly outsideFromRoot: string
  /** Changes whenever anything under `outside` is created, changed or removed. */
  readonly outsideFingerprint: () => Effect.Effect<string>
  /** Absolute paths outside the root that a filesystem primitive touched, when the adapter logs them. */
  readonly outsideAccesses?: () => ReadonlyArray<string>
}
