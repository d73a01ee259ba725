/**
 * PostToolUse without the settle wait (issue 27): the after-event declares what the tool says the
 * file now holds — Write's content, Edit's and MultiEdit's edits (applied by the engine to the
 * before-content), Gemini CLI's write_file content and replace edit — through
 * `recordCheckpointFromIntent`'s `expected`. NotebookEdit, unknown tools and failed tools declare
 * nothing. A wrong guess (the file was changed again by something else) records the real content.
 */
import { readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "@effect/vitest"
import type { SessionId } from "@rewind/contracts"
import { ArtifactStore, loadSession } from "@rewind/core"
import { Effect } from "effect"
import { claudeCodeEvent } from "../src/hooks/claudeCode.js"
import { geminiCliEvent } from "../src/hooks/geminiCli.js"
import type { HookEngine } from "../src/hooks/hookEngine.js"
import { hookSessionId } from "../src/hooks/hookEngine.js"
import type { HookEvent } from "../src/hooks/hookEvent.js"
import { handleHookEvent } from "../src/hooks/runHook.js"
import { openRewind } from "../src/index.js"
import { tempDir } from "./cliHarness.js"
import { seedWorkspace } from "./fixtures/hookPayloads.js"
import { feedInProcess } from "./hookHarness.js"

/** An engine that only remembers what `recordAfter` was asked. */
const spyEngine = () => {
  const asked: Array<Parameters<HookEngine["recordAfter"]>[0]> = []
  const engine: HookEngine = {
    ensureSession: async () => {},
    openTurn: async () => "t1" as never,
    startTurn: async () => "t1" as never,
    endTurn: async () => {},
    capture: async () => ({ _tag: "NotCaptured", reason: "spy" }) as never,
    declareBefore: async () => {},
    recordAfter: async (input) => {
      asked.push(input)
      return { recorded: false, warning: { reason: "unchanged", message: "spy" } } as never
    },
  }
  return { engine, asked }
}

const expectedOf = async (root: string, event: HookEvent | { kind: "undecodable" }) => {
  if (event.kind === "undecodable") throw new Error("undecodable")
  const { engine, asked } = spyEngine()
  await handleHookEvent(engine, event, root)
  return asked.map((a) => a.expected)
}

const claude = (
  root: string,
  tool_name: string,
  tool_input: Record<string, unknown>,
  event = "PostToolUse",
) =>
  claudeCodeEvent({
    session_id: "s",
    cwd: root,
    hook_event_name: event,
    tool_name,
    tool_input,
    tool_use_id: "t",
  })

describe("the after-content a file tool declares", () => {
  it("Claude Code: Write's content, Edit's edit, MultiEdit's edits; NotebookEdit and failures none", async () => {
    const root = tempDir()
    const file_path = join(root, "a.md")
    expect(await expectedOf(root, claude(root, "Write", { file_path, content: "# A\n" }))).toEqual([
      { _tag: "Written", content: "# A\n" },
    ])
    expect(
      await expectedOf(
        root,
        claude(root, "Edit", { file_path, old_string: "A", new_string: "B", replace_all: true }),
      ),
    ).toEqual([{ _tag: "Edited", edits: [{ oldString: "A", newString: "B", replaceAll: true }] }])
    expect(
      await expectedOf(root, claude(root, "Edit", { file_path, old_string: "A", new_string: "B" })),
    ).toEqual([{ _tag: "Edited", edits: [{ oldString: "A", newString: "B" }] }])
    const edits = [
      { old_string: "A", new_string: "B" },
      { old_string: "B", new_string: "C", replace_all: false },
    ]
    expect(await expectedOf(root, claude(root, "MultiEdit", { file_path, edits }))).toEqual([
      {
        _tag: "Edited",
        edits: [
          { oldString: "A", newString: "B" },
          { oldString: "B", newString: "C" },
        ],
      },
    ])
    // A malformed edit list, a notebook, a failed tool: nothing declared, today's read rule.
    expect(
      await expectedOf(root, claude(root, "MultiEdit", { file_path, edits: [{ old_string: 1 }] })),
    ).toEqual([undefined])
    const notebook = { notebook_path: join(root, "n.ipynb"), new_source: "x", cell_id: "c" }
    expect(await expectedOf(root, claude(root, "NotebookEdit", notebook))).toEqual([undefined])
    expect(
      await expectedOf(root, claude(root, "Write", { file_path, content: "x" }, "PostToolUseFailure")),
    ).toEqual([undefined])
  })

  it("Gemini CLI: write_file's content, replace's edit on every occurrence", async () => {
    const root = tempDir()
    const file_path = join(root, "a.md")
    const gemini = (tool_name: string, tool_input: Record<string, unknown>) =>
      geminiCliEvent({
        session_id: "s",
        cwd: root,
        hook_event_name: "AfterTool",
        tool_name,
        tool_input,
        tool_response: {},
      })
    expect(await expectedOf(root, gemini("write_file", { file_path, content: "x\n" }))).toEqual([
      { _tag: "Written", content: "x\n" },
    ])
    expect(
      await expectedOf(root, gemini("replace", { file_path, old_string: "a", new_string: "b" })),
    ).toEqual([{ _tag: "Edited", edits: [{ oldString: "a", newString: "b", replaceAll: true }] }])
  })
})

const afterContents = async (root: string, sessionId: SessionId) => {
  const rewind = await openRewind({ workspaceRoot: root, create: false })
  try {
    return await rewind.run(
      Effect.gen(function* () {
        const state = yield* loadSession(sessionId)
        const artifacts = yield* ArtifactStore
        const out: Array<string | null> = []
        for (const c of state.checkpoints) {
          out.push(
            c.after?._tag === "present" ? new TextDecoder().decode(yield* artifacts.get(c.after.hash)) : null,
          )
        }
        return out
      }),
    )
  } finally {
    await rewind.close()
  }
}

describe("the after-content recorded", () => {
  it("is the file's, whether the tool's declaration matches it or not", async () => {
    const root = tempDir()
    seedWorkspace(root)
    const common = { session_id: "e", cwd: root, transcript_path: "/t.jsonl" }
    const tool = (event: string, id: string, tool_name: string, tool_input: Record<string, unknown>) => ({
      payload: { ...common, hook_event_name: event, tool_name, tool_input, tool_use_id: id },
    })
    const path = join(root, "notes.md")
    const write = { file_path: path, content: "# Notes\n" }
    const edit = { file_path: path, old_string: "# Notes\n", new_string: "# Notes\n- one\n" }
    const multi = {
      file_path: path,
      edits: [
        { old_string: "- one\n", new_string: "- one\n- two\n" },
        { old_string: "# Notes", new_string: "# My notes" },
      ],
    }
    const stale = { file_path: path, old_string: "- two\n", new_string: "- 2\n" }
    const results = await feedInProcess("claude-code", root, [
      { payload: { ...common, hook_event_name: "UserPromptSubmit", prompt: "Write notes" } },
      tool("PreToolUse", "w", "Write", write),
      { change: (r) => writeFileSync(join(r, "notes.md"), "# Notes\n"), what: "Write" },
      tool("PostToolUse", "w", "Write", write),
      tool("PreToolUse", "e", "Edit", edit),
      { change: (r) => writeFileSync(join(r, "notes.md"), "# Notes\n- one\n"), what: "Edit" },
      tool("PostToolUse", "e", "Edit", edit),
      tool("PreToolUse", "m", "MultiEdit", multi),
      { change: (r) => writeFileSync(join(r, "notes.md"), "# My notes\n- one\n- two\n"), what: "MultiEdit" },
      tool("PostToolUse", "m", "MultiEdit", multi),
      tool("PreToolUse", "s", "Edit", stale),
      {
        // The edit ran, then something else (a formatter, another session) rewrote the file.
        change: (r) =>
          writeFileSync(join(r, "notes.md"), "# My notes\n- one\n- 2\n- three (by someone else)\n"),
        what: "Edit, then another writer",
      },
      tool("PostToolUse", "s", "Edit", stale),
    ])
    expect(results.flatMap((r) => r.problems)).toEqual([])
    expect(await afterContents(root, hookSessionId("claude-code", "e"))).toEqual([
      "# Notes\n",
      "# Notes\n- one\n",
      "# My notes\n- one\n- two\n",
      "# My notes\n- one\n- 2\n- three (by someone else)\n",
    ])
    expect(readFileSync(path, "utf8")).toBe("# My notes\n- one\n- 2\n- three (by someone else)\n")
  })
})
