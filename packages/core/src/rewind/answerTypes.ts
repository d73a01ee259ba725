/**
 * The shapes every `RewindApi` signature is written in: the typed infrastructure errors an
 * operation may fail with (`RewindError`; refusals are values, not errors), the answer
 * (`Answer<S>`, typed by the operation's success Schema), the decoded type of an argument Schema,
 * and the options objects a host passes last.
 */
import type {
  ArtifactCorrupt,
  ArtifactNotFound,
  ArtifactStoreError,
  CommandAlreadyRecorded,
  EventDecodeError,
  ForkBundleInvalid,
  Outcome,
  PathRefused,
  StoreError,
  TaskStopFailed,
  UnrecoverableRewindError,
  WorkspaceIoError,
} from "@rewind/contracts"
import type { Effect, Schema } from "effect"
import type { CaptureProgress } from "../snapshot/capturePoint.js"
import type { GcRootUnreadable } from "../snapshot/pointGc.js"
import type * as A from "./arguments.js"

/** The typed infrastructure errors an operation may fail with (refusals are values, not errors). */
export type RewindError =
  | StoreError
  | EventDecodeError
  | ArtifactStoreError
  | ArtifactNotFound
  | ArtifactCorrupt
  | WorkspaceIoError
  | PathRefused
  | UnrecoverableRewindError
  | ForkBundleInvalid
  | CommandAlreadyRecorded
  | TaskStopFailed
  | GcRootUnreadable

/** What an operation answers: `{ ok: true, value }` typed by its success Schema, or a refusal. */
export type Answer<S extends Schema.Schema.Any> = Effect.Effect<Outcome<Schema.Schema.Type<S>>, RewindError>

export type In<S extends Schema.Schema.Any> = Schema.Schema.Type<S>

/** Capture options; `onProgress` reports the scan and hash phases. */
export type CaptureOptions = Omit<
  NonNullable<In<typeof A.CaptureOptions>>,
  "onProgress" | "declaredPaths"
> & {
  /** Host paths (`./a.txt` is read as `a.txt`); always tracked. */
  readonly declaredPaths?: ReadonlyArray<string>
  readonly onProgress?: (progress: CaptureProgress) => void
}
export type CleanupOptions = NonNullable<In<typeof A.CleanupOptions>>
export type PointDiffOptions = NonNullable<In<typeof A.PointDiffOptions>>
export type DoctorOptions = Omit<NonNullable<In<typeof A.DoctorOptions>>, "onProgress"> & {
  readonly onProgress?: (checked: number) => void
}
