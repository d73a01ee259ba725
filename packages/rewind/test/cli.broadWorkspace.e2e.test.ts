/**
 * No store is made for a workspace at the user's home directory (or the filesystem root) unless
 * asked in so many words: such a workspace would capture every project and secret below it at every
 * turn. Through the built bin, at each place a store is made: `init` (refused without `--force`), a
 * hook's first event (an agent started in `~` with user-level hooks: logged, exit 0, nothing made),
 * and the hook client's server (`serve --create`); the facade's `openRewind` meets the same rule in
 * the layer they all open (storeHealth.test.ts). A project below the home directory is fine, and
 * a store made with `--force` is used.
 */
import { existsSync, mkdirSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { cli, tempDir } from "./cliHarness.js"

describe("a workspace at the home directory (the built bin)", () => {
  it("is made by init --force only; a hook and serve --create make none; a project below is fine", async () => {
    const home = tempDir()
    const env = {
      HOME: home,
      XDG_RUNTIME_DIR: join(home, ".run"),
      CLAUDE_PROJECT_DIR: "",
      REWIND_HOOK_SERVER: "off",
    }
    const store = join(home, ".rewind")
    // An agent started in the home directory, with user-level hooks: its first prompt.
    const promptInHome = () =>
      cli(
        ["hook", "claude-code"],
        home,
        { ...env, CLAUDE_PROJECT_DIR: home },
        JSON.stringify({
          session_id: "in-home",
          transcript_path: "/nonexistent",
          cwd: home,
          hook_event_name: "UserPromptSubmit",
          prompt: "hello",
        }),
      )

    const refused = await cli(["init"], home, env)
    expect(refused.code).toBe(2)
    expect(refused.stderr).toMatch(/no Rewind store made: .* is your home directory/)
    expect(existsSync(store)).toBe(false)
    const json = await cli(["init", "--json"], home, env)
    expect(json.code).toBe(2)
    expect(JSON.parse(json.stdout.trim())).toMatchObject({ type: "error", code: 2, reason: "too_broad" })

    const hook = await promptInHome()
    expect(hook.code, hook.stderr).toBe(0)
    expect(hook.stderr).toMatch(/no Rewind store made/)
    expect(existsSync(store)).toBe(false)

    const served = await cli(["serve", "--create", "--workspace", home], home, env, "")
    expect(served.code).toBe(2)
    expect(served.stderr).toMatch(/is your home directory/)
    expect(existsSync(store)).toBe(false)

    const project = join(home, "project")
    mkdirSync(project)
    expect((await cli(["init"], project, env)).code).toBe(0)
    expect(existsSync(join(project, ".rewind"))).toBe(true)

    const forced = await cli(["init", "--force"], home, env)
    expect(forced.code, forced.stderr).toBe(0)
    expect(existsSync(store)).toBe(true)
    // Made on purpose, it is used: a hook there records.
    const recorded = await promptInHome()
    expect(recorded.code).toBe(0)
    expect(recorded.stderr).toBe("")
  })
})
