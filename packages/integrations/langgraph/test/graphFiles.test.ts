// The example of docs/langgraph.md, run: a compiled StateGraph (no model) whose nodes edit files,
// checkpointed by the Rewind saver on the same SQLite file as the Rewind store, interrupted before
// its last node, then taken back to a past checkpoint with the workspace restored (preview, token,
// rescue point, undo) and resumed from there.
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Annotation, END, START, StateGraph, type StateSnapshot } from "@langchain/langgraph"
import { openRewind, type Rewind } from "rewind"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { GraphFiles } from "../src/files.js"
import { openSqliteSaver, type RewindCheckpointSaver } from "../src/index.js"

const State = Annotation.Root({
  step: Annotation<number>(),
  // The workspace point of each checkpoint, written by the bridge.
  rewindPoint: Annotation<string>(),
})

let root: string
let rewind: Rewind
let saver: RewindCheckpointSaver

beforeEach(async () => {
  root = mkdtempSync(join(tmpdir(), "rewind-langgraph-files-"))
  rewind = await openRewind({ workspaceRoot: root })
  // The graph's checkpoints live in the same database as Rewind's own records.
  saver = await openSqliteSaver({ path: join(root, ".rewind", "rewind.db") })
})
afterEach(async () => {
  await saver.close()
  await rewind.close()
  rmSync(root, { recursive: true, force: true })
})

const read = (path: string) => (existsSync(join(root, path)) ? readFileSync(join(root, path), "utf8") : null)

const buildGraph = (files: GraphFiles, runs: Array<string>) =>
  new StateGraph(State)
    .addNode(
      "draft",
      files.node("draft", (state: typeof State.State) => {
        runs.push("draft")
        writeFileSync(join(root, "notes.md"), "# Notes\ndraft\n")
        return { step: state.step + 1 }
      }),
    )
    .addNode(
      "expand",
      files.node("expand", (state: typeof State.State) => {
        runs.push("expand")
        writeFileSync(join(root, "notes.md"), `# Notes\ndraft\nexpanded at step ${state.step}\n`)
        writeFileSync(join(root, "todo.txt"), "review\n")
        return { step: state.step + 1 }
      }),
    )
    .addNode(
      "publish",
      files.node("publish", (state: typeof State.State) => {
        runs.push("publish")
        writeFileSync(join(root, "published.md"), read("notes.md") ?? "")
        return { step: state.step + 1 }
      }),
    )
    .addEdge(START, "draft")
    .addEdge("draft", "expand")
    .addEdge("expand", "publish")
    .addEdge("publish", END)
    .compile({ checkpointer: saver, interruptBefore: ["publish"] })

describe("files follow the graph", () => {
  it("restores the workspace to a past graph checkpoint and resumes from it", async () => {
    const files = new GraphFiles({ rewind })
    const runs: Array<string> = []
    const graph = buildGraph(files, runs)
    const config = { configurable: { thread_id: "notes-1" } }
    writeFileSync(join(root, "keep.txt"), "untouched\n")

    await graph.invoke({ step: 0, ...(await files.begin("notes-1")) }, config)
    // Interrupted before publish: draft and expand ran.
    expect(runs).toEqual(["draft", "expand"])
    expect((await graph.getState(config)).next).toEqual(["publish"])
    expect(read("todo.txt")).toBe("review\n")

    // Time travel: the checkpoint saved after draft, before expand.
    const history: Array<StateSnapshot> = []
    for await (const snapshot of graph.getStateHistory(config)) history.push(snapshot)
    const afterDraft = history.find((s) => s.next.length === 1 && s.next[0] === "expand")!
    expect(afterDraft.values.step).toBe(1)

    const preview = await files.preview("notes-1", afterDraft.values)
    expect(preview.ok).toBe(true)
    if (!preview.ok) return
    const planned = new Map(preview.value.preview.changes.map((c) => [c.path, c.action]))
    // Only what the point records: todo.txt appeared later, so it is left alone (Rewind deletes a
    // file only where a point records it as deleted).
    expect([...planned.entries()]).toEqual([["notes.md", "write"]])
    expect(preview.value.preview.token).toBeDefined()
    // No token, nothing written.
    const refused = await files.restore("notes-1", afterDraft.values, "")
    expect(refused.ok).toBe(false)
    expect(read("notes.md")).toBe("# Notes\ndraft\nexpanded at step 1\n")

    const restored = await files.restore("notes-1", afterDraft.values, preview.value.preview.token!)
    expect(restored.ok).toBe(true)
    expect(read("notes.md")).toBe("# Notes\ndraft\n")
    expect(read("todo.txt")).toBe("review\n")
    expect(read("keep.txt")).toBe("untouched\n")

    // Undo: the rescue point brings the interrupted run's files back; then go back again.
    const undoPreview = await files.previewUndo("notes-1")
    expect(undoPreview.ok).toBe(true)
    if (!undoPreview.ok) return
    expect((await files.undo("notes-1", undoPreview.value.preview.token!)).ok).toBe(true)
    expect(read("notes.md")).toBe("# Notes\ndraft\nexpanded at step 1\n")
    const again = await files.preview("notes-1", afterDraft.values)
    if (!again.ok) throw new Error(again.refusal.message)
    expect((await files.restore("notes-1", afterDraft.values, again.value.preview.token!)).ok).toBe(true)
    expect(read("notes.md")).toBe("# Notes\ndraft\n")
    // Resume (a fork of the thread) from the past checkpoint: expand runs again on the restored files.
    await graph.invoke(null, afterDraft.config)
    expect(runs).toEqual(["draft", "expand", "expand"])
    expect(read("notes.md")).toBe("# Notes\ndraft\nexpanded at step 1\n")
    expect((await graph.getState(config)).next).toEqual(["publish"])
    await graph.invoke(null, config)
    expect(runs.at(-1)).toBe("publish")
    expect(read("published.md")).toBe("# Notes\ndraft\nexpanded at step 1\n")
    expect((await graph.getState(config)).values.step).toBe(3)
  })

  it("refuses a checkpoint without a workspace point and a node run without a thread", async () => {
    const files = new GraphFiles({ rewind })
    const missing = await files.preview("t", { step: 1 })
    expect(missing.ok).toBe(false)
    if (!missing.ok) expect(missing.refusal.kind).toBe("not_found")
    const undo = await files.previewUndo("t")
    expect(!undo.ok && undo.refusal.kind).toBe("nothing_to_undo")
    const node = files.node("n", () => ({}))
    await expect(node({}, {})).rejects.toThrow(/thread_id/)
  })
})
