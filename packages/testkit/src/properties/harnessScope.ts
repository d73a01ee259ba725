/**
 * The frame of every scenario of the snapshot and protection properties: a fresh workspace of the
 * adapter's harness, its stores provided to the scenario, disposed of after whatever the outcome.
 * Internal to the properties (not re-exported by the testkit's index).
 */
import { Effect } from "effect"
import type { SnapshotHarness } from "./snapshotProperties.js"

/** Runs `body` over a fresh workspace of `harness` (see the header). */
export const withOpenHarness = <A, E, R>(
  harness: SnapshotHarness,
  body: (files: ReturnType<SnapshotHarness["open"]>) => Effect.Effect<A, E, R>,
) => {
  const files = harness.open()
  return body(files).pipe(Effect.provide(files.layer), Effect.ensuring(Effect.sync(files.dispose)))
}
