import { describe, expect, it } from "@effect/vitest"
import {
  Checkpoint,
  CheckpointCreated,
  type CheckpointId,
  type FileVersion,
  type MessageId,
} from "@rewind/contracts"
import { Schema } from "effect"
import { NO_CHECKPOINT_MESSAGE, planForkRestore } from "../src/fork/planForkRestore.js"
import { projectSession } from "../src/session/sessionState.js"
import { mid, StreamBuilder } from "./fixtures.js"

const v = (n: number): FileVersion =>
  ({ _tag: "present", hash: n.toString(16).padStart(64, "0") }) as FileVersion
const absent: FileVersion = { _tag: "absent" }

const checkpoint = (
  b: StreamBuilder,
  id: string,
  turn: number,
  path: string,
  before: FileVersion,
  after: FileVersion,
) => {
  b.events.push(
    new CheckpointCreated({
      checkpoint: Schema.decodeUnknownSync(Checkpoint)({
        checkpointId: id,
        turnId: `t${turn}`,
        anchorMessageId: `mu${turn}`,
        toolName: "Edit",
        path,
        before,
        after,
        linesAdded: 1,
        linesRemoved: 1,
      }),
    }),
  )
  return b
}

/** Turn 1 creates a.ts; turn 2 edits a.ts twice and creates b.ts; turn 3 edits a.ts again. */
const history = () => {
  const b = new StreamBuilder().turn(1)
  checkpoint(b, "c1", 1, "a.ts", absent, v(1))
  b.turn(2)
  checkpoint(b, "c2", 2, "a.ts", v(1), v(2))
  checkpoint(b, "c3", 2, "b.ts", absent, v(3))
  checkpoint(b, "c4", 2, "a.ts", v(2), v(4))
  b.turn(3)
  checkpoint(b, "c5", 3, "a.ts", v(4), v(5))
  return b
}

describe("planForkRestore", () => {
  it("refuses when there is no checkpoint at all, whatever the target", () => {
    const state = projectSession(new StreamBuilder().turn(1).stored())
    for (const target of [
      { latest: true } as const,
      { messageId: mid("u1") },
      { checkpointId: "c" as CheckpointId },
    ]) {
      expect(planForkRestore(state, target)).toEqual({
        ok: false,
        kind: "no_checkpoint",
        message: NO_CHECKPOINT_MESSAGE,
      })
    }
  })

  it("a message target undoes, per file, the first change made after the end of the target turn", () => {
    const state = projectSession(history().stored())
    const atTurn1 = planForkRestore(state, { messageId: mid("a1") })
    expect(atTurn1).toEqual({
      ok: true,
      prefix: [mid("u1"), mid("a1")],
      checkpointId: undefined,
      files: [
        { path: "a.ts", version: v(1), checkpointId: "c2" },
        { path: "b.ts", version: absent, checkpointId: "c3" },
      ],
    })
    // A user message target includes its whole turn: the turn's own changes are kept.
    const atUser2 = planForkRestore(state, { messageId: mid("u2") })
    expect(atUser2.ok && atUser2.prefix).toEqual([mid("u1"), mid("a1"), mid("u2"), mid("a2")])
    expect(atUser2.ok && atUser2.files).toEqual([{ path: "a.ts", version: v(4), checkpointId: "c5" }])
    const atEnd = planForkRestore(state, { messageId: mid("a3") })
    expect(atEnd.ok && atEnd.files).toEqual([])
  })

  it("an explicit or latest checkpoint restores that checkpoint's before-content only", () => {
    const state = projectSession(history().stored())
    expect(planForkRestore(state, { checkpointId: "c3" as CheckpointId })).toEqual({
      ok: true,
      prefix: [mid("u1"), mid("a1"), mid("u2"), mid("a2")],
      checkpointId: "c3",
      files: [{ path: "b.ts", version: absent, checkpointId: "c3" }],
    })
    const latest = planForkRestore(state, { latest: true })
    expect(latest.ok && latest.files).toEqual([{ path: "a.ts", version: v(4), checkpointId: "c5" }])
    expect(latest.ok && latest.prefix.at(-1)).toBe(mid("a3"))
  })

  it("refuses unknown targets and targets a rewind cut; latest skips cut checkpoints", () => {
    const b = history()
    b.rewind({
      keptMessageIds: [mid("u1"), mid("a1"), mid("u2"), mid("a2")],
      branchCutAfterMessageId: mid("a3"),
      branchGeneration: 1,
      targetMessageId: mid("u3"),
      scope: "conversation",
    })
    const state = projectSession(b.stored())
    expect(planForkRestore(state, { checkpointId: "zz" as CheckpointId })).toMatchObject({
      ok: false,
      kind: "not_found",
    })
    expect(planForkRestore(state, { messageId: "nope" as MessageId })).toMatchObject({
      ok: false,
      kind: "not_found",
    })
    expect(planForkRestore(state, { checkpointId: "c5" as CheckpointId })).toMatchObject({
      ok: false,
      kind: "not_on_active_branch",
    })
    expect(planForkRestore(state, { messageId: mid("u3") })).toMatchObject({
      ok: false,
      kind: "not_on_active_branch",
    })
    const latest = planForkRestore(state, { latest: true })
    expect(latest.ok && latest.checkpointId).toBe("c4")
    // The cut turn 3 still changed a.ts after turn 2: a message fork at turn 2 undoes it.
    const atTurn2 = planForkRestore(state, { messageId: mid("a2") })
    expect(atTurn2.ok && atTurn2.files).toEqual([{ path: "a.ts", version: v(4), checkpointId: "c5" }])
  })
})
