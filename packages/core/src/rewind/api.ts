/**
 * The declared `Rewind` service: every operation a host needs, with written signatures. This is
 * the one API of the engine; the Promise facade, the CLI, the server and the MCP tools are
 * projections of it (see docs/architecture.md), and `RewindOperations` (operations.ts) describes
 * each operation's arguments and answer as Schemas so the projections are mechanical.
 *
 * Every operation answers one shape, `Effect<Outcome<A>, RewindError>`: an expected "no" is the
 * value `{ ok: false, refusal }` (input its Schemas refuse is `invalid_input`; a version conflict
 * the engine's retries did not resolve is `conflict`), and the error channel holds only the
 * typed infrastructure errors, each a `Schema.TaggedError` with its `_tag`. Arguments are decoded
 * by the service itself, so a host that skips a surface's checks still cannot hand the engine a
 * malformed value. Interrupting the call's fiber cancels it. Options objects come last and may be
 * omitted; an operation that reports progress takes `onProgress` there.
 */
import { Context } from "effect"
import type { ForkApi, MergeApi, PointApi } from "./forkAndPointApi.js"
import type { CheckpointApi, SessionApi } from "./sessionApi.js"

export type {
  Answer,
  CaptureOptions,
  CleanupOptions,
  DoctorOptions,
  PointDiffOptions,
  RewindError,
} from "./answerTypes.js"

/** Every operation a host needs, declared by capability in `sessionApi.ts` and `forkAndPointApi.ts`. */
export interface RewindApi extends SessionApi, CheckpointApi, ForkApi, PointApi, MergeApi {}

export class Rewind extends Context.Tag("@rewind/core/Rewind")<Rewind, RewindApi>() {}
