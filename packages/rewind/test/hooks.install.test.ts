/**
 * `rewind install` / `rewind uninstall` (issue 27 item 3): Rewind's hook entries merged into an
 * agent's settings file that already has the user's own hooks — which survive byte for byte —
 * idempotently, and removed again exactly.
 */
import { execFile, execFileSync } from "node:child_process"
import {
  chmodSync,
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  realpathSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs"
import { dirname, join } from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { serverEnv } from "../src/hooks/hookClient.js"
import {
  HOOK_ENV_PREFIX,
  installHooks,
  isRewindHookCommand,
  settingsPath,
  uninstallHooks,
} from "../src/hooks/hookInstall.js"
import { hookClientKind, hookCommandLine, nativeClientPath } from "../src/hooks/nativeClient.js"
import { BIN, jsonLines, tempDir } from "./cliHarness.js"

// A project settings file as a Claude Code user may have it (https://code.claude.com/docs/en/settings):
// four-space indentation, their own PreToolUse guard and a compact Notification hook.
const CLAUDE_SETTINGS = `{
    "model": "opus",
    "permissions": { "allow": ["Bash(npm test:*)"] },
    "hooks": {
        "PreToolUse": [
            {
                "matcher": "Bash",
                "hooks": [ { "type": "command", "command": "./scripts/guard.sh", "timeout": 5 } ]
            }
        ],
        "Notification": [{"hooks": [{"type": "command", "command": "notify-send 'Claude needs you'"}]}]
    }
}
`
const CLAUDE_USER_ENTRIES = [
  `{
                "matcher": "Bash",
                "hooks": [ { "type": "command", "command": "./scripts/guard.sh", "timeout": 5 } ]
            }`,
  `"Notification": [{"hooks": [{"type": "command", "command": "notify-send 'Claude needs you'"}]}]`,
  `"permissions": { "allow": ["Bash(npm test:*)"] }`,
]

// Gemini CLI (https://geminicli.com/docs/hooks/reference#configuration-schema), with comments
// (its settings files are JSON with comments) and a user hook on an event Rewind also uses.
const GEMINI_SETTINGS = `{
  // my theme
  "ui": { "theme": "GitHub" },
  "hooks": {
    "BeforeTool": [
      {
        "matcher": "run_shell_command",
        "hooks": [{ "name": "audit", "type": "command", "command": "~/.gemini/hooks/audit.sh", "timeout": 3000 }]
      }
    ]
  }
}
`

const cliEnv = (args: ReadonlyArray<string>, cwd: string, env: Record<string, string> = {}) =>
  new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
    execFile(
      process.execPath,
      [BIN, ...args],
      { cwd, encoding: "utf8", env: { ...process.env, NO_COLOR: "1", ...env } },
      (error, stdout, stderr) =>
        resolve({
          code: error === null ? 0 : typeof error.code === "number" ? error.code : null,
          stdout,
          stderr,
        }),
    )
  })

const commandsOf = (settings: unknown, event: string): Array<string> => {
  const groups =
    (settings as { hooks?: Record<string, Array<{ hooks: Array<{ command: string }> }>> }).hooks?.[event] ??
    []
  return groups.flatMap((g) => g.hooks.map((h) => h.command))
}

describe("rewind install / uninstall", () => {
  it("Claude Code: adds every event's entry, keeps the user's entries byte for byte, is idempotent, and uninstall gives the file back", () => {
    const root = tempDir()
    const path = settingsPath("claude-code", { workspace: root, user: false })
    expect(path).toBe(join(root, ".claude", "settings.json"))
    mkdirSync(join(root, ".claude"))
    writeFileSync(path, CLAUDE_SETTINGS)

    const first = installHooks("claude-code", path, hookCommandLine("claude-code", "rewind", undefined))
    expect(first.events).toEqual([
      "SessionStart",
      "UserPromptSubmit",
      "PreToolUse",
      "PostToolUse",
      "PostToolUseFailure",
      "Stop",
      "SessionEnd",
    ])
    const installed = readFileSync(path, "utf8")
    for (const entry of CLAUDE_USER_ENTRIES) expect(installed).toContain(entry)
    const parsed = JSON.parse(installed)
    expect(commandsOf(parsed, "PreToolUse")).toEqual([
      "./scripts/guard.sh",
      `${HOOK_ENV_PREFIX}rewind hook claude-code`,
    ])
    expect(parsed.hooks.PreToolUse[1].matcher).toBe("Write|Edit|MultiEdit|NotebookEdit")
    expect(parsed.hooks.PostToolUse[0].matcher).toBe("Write|Edit|MultiEdit|NotebookEdit|Bash")
    expect(commandsOf(parsed, "Stop")).toEqual([`${HOOK_ENV_PREFIX}rewind hook claude-code`])
    expect(parsed.model).toBe("opus")

    // Again: nothing to add, the file is untouched.
    expect(
      installHooks("claude-code", path, hookCommandLine("claude-code", "/other/path/rewind.mjs", undefined))
        .changed,
    ).toBe(false)
    expect(readFileSync(path, "utf8")).toBe(installed)

    expect(uninstallHooks("claude-code", path).events).toHaveLength(7)
    expect(readFileSync(path, "utf8")).toBe(CLAUDE_SETTINGS)
    expect(uninstallHooks("claude-code", path).changed).toBe(false)
  })

  it("Gemini CLI: comments and the user's hook on a shared event survive; uninstall is exact", () => {
    const root = tempDir()
    const path = settingsPath("gemini-cli", { workspace: root, user: false })
    mkdirSync(join(root, ".gemini"))
    writeFileSync(path, GEMINI_SETTINGS)
    installHooks(
      "gemini-cli",
      path,
      hookCommandLine("gemini-cli", "node /opt/rewind/dist/cli/rewind.mjs", undefined),
    )
    const installed = readFileSync(path, "utf8")
    expect(installed).toContain("// my theme")
    expect(installed).toContain(
      `{ "name": "audit", "type": "command", "command": "~/.gemini/hooks/audit.sh", "timeout": 3000 }`,
    )
    expect(installed).toContain(
      `"command": ${JSON.stringify(`${HOOK_ENV_PREFIX}node /opt/rewind/dist/cli/rewind.mjs hook gemini-cli`)}`,
    )
    expect(installed).toContain(`"name": "rewind"`)
    expect(installed).toContain(`"matcher": "write_file|replace"`)
    uninstallHooks("gemini-cli", path)
    expect(readFileSync(path, "utf8")).toBe(GEMINI_SETTINGS)
  })

  it("a user who put their own hook into Rewind's group keeps it; a missing file is created; a broken one is refused untouched", () => {
    const root = tempDir()
    const path = join(root, ".claude", "settings.json")
    installHooks("claude-code", path, hookCommandLine("claude-code", "rewind", undefined))
    expect(JSON.parse(readFileSync(path, "utf8")).hooks.SessionEnd).toHaveLength(1)
    // The user adds a hook of their own to the group Rewind made.
    const shared = readFileSync(path, "utf8").replace(
      `"command": ${JSON.stringify(`${HOOK_ENV_PREFIX}rewind hook claude-code`)}\n          }\n        ]\n      }\n    ],\n    "SessionEnd"`,
      `"command": ${JSON.stringify(`${HOOK_ENV_PREFIX}rewind hook claude-code`)}\n          },\n          { "type": "command", "command": "./mine.sh" }\n        ]\n      }\n    ],\n    "SessionEnd"`,
    )
    expect(shared).not.toBe(readFileSync(path, "utf8"))
    writeFileSync(path, shared)
    uninstallHooks("claude-code", path)
    const left = JSON.parse(readFileSync(path, "utf8"))
    expect(left.hooks).toEqual({ Stop: [{ hooks: [{ type: "command", command: "./mine.sh" }] }] })

    writeFileSync(path, '{ "hooks": [ }')
    expect(() =>
      installHooks("claude-code", path, hookCommandLine("claude-code", "rewind", undefined)),
    ).toThrow(/not a settings object.*nothing was changed/)
    expect(readFileSync(path, "utf8")).toBe('{ "hooks": [ }')
    writeFileSync(path, '{ "hooks": [] }')
    expect(() =>
      installHooks("claude-code", path, hookCommandLine("claude-code", "rewind", undefined)),
    ).toThrow(/"hooks" is not an object/)
  })

  it("a linked settings file (dotfiles) is edited where it leads and stays a link; its mode is kept; a dangling link is refused", () => {
    const root = tempDir()
    const dotfiles = join(root, "dotfiles")
    mkdirSync(dotfiles)
    const real = join(dotfiles, "claude-settings.json")
    writeFileSync(real, CLAUDE_SETTINGS)
    chmodSync(real, 0o600)
    const path = join(root, "project", ".claude", "settings.json")
    mkdirSync(dirname(path), { recursive: true })
    symlinkSync("../../dotfiles/claude-settings.json", path)
    const command = hookCommandLine("claude-code", "rewind", undefined)

    const installed = installHooks("claude-code", path, command)
    expect(installed).toMatchObject({ path, linkTarget: realpathSync(real), changed: true })
    expect(lstatSync(path).isSymbolicLink()).toBe(true)
    expect(readlinkSync(path)).toBe("../../dotfiles/claude-settings.json")
    expect(JSON.parse(readFileSync(real, "utf8")).hooks.SessionEnd).toHaveLength(1)
    expect(statSync(real).mode & 0o777).toBe(0o600)
    expect(readdirSync(dotfiles)).toEqual(["claude-settings.json"])
    expect(uninstallHooks("claude-code", path)).toMatchObject({
      linkTarget: realpathSync(real),
      changed: true,
    })
    expect(readFileSync(real, "utf8")).toBe(CLAUDE_SETTINGS)
    expect(lstatSync(path).isSymbolicLink()).toBe(true)

    const dangling = join(root, "other", ".claude", "settings.json")
    mkdirSync(dirname(dangling), { recursive: true })
    symlinkSync(join(root, "nowhere.json"), dangling)
    expect(() => installHooks("claude-code", dangling, command)).toThrow(
      /is a symbolic link to .*nowhere\.json, which leads to no file.*nothing was changed/,
    )
    expect(lstatSync(dangling).isSymbolicLink()).toBe(true)
    expect(existsSync(join(root, "nowhere.json"))).toBe(false)
  })

  it("the installed command runs the hook without the CA bundle and hands its path on to the server it starts", () => {
    const probe = `node -e 'process.stdout.write(JSON.stringify([process.env.NODE_EXTRA_CA_CERTS ?? null, process.env.REWIND_HOOK_CA_CERTS]))'`
    const run = (env: Record<string, string>) => {
      const base = { ...process.env }
      delete base.NODE_EXTRA_CA_CERTS
      return JSON.parse(
        execFileSync("/bin/sh", ["-c", `${HOOK_ENV_PREFIX}${probe}`], {
          encoding: "utf8",
          env: { ...base, ...env },
        }),
      )
    }
    expect(run({ NODE_EXTRA_CA_CERTS: "/certs/my bundle.pem" })).toEqual([null, "/certs/my bundle.pem"])
    expect(run({})).toEqual([null, ""])
    // The server the client starts gets the bundle back; an explicit value is left alone.
    expect(serverEnv({ REWIND_HOOK_CA_CERTS: "/certs/a.pem", PATH: "/bin" })).toEqual({
      NODE_EXTRA_CA_CERTS: "/certs/a.pem",
      PATH: "/bin",
    })
    expect(serverEnv({ REWIND_HOOK_CA_CERTS: "" })).toEqual({})
    expect(serverEnv({ REWIND_HOOK_CA_CERTS: "/a", NODE_EXTRA_CA_CERTS: "/b" })).toEqual({
      NODE_EXTRA_CA_CERTS: "/b",
    })
  })

  it("recognises Rewind's command however it is invoked, and nothing else", () => {
    expect(isRewindHookCommand("claude-code", "rewind hook claude-code")).toBe(true)
    expect(
      isRewindHookCommand("claude-code", "'/usr/bin/node' /x/rewind.mjs hook claude-code --workspace ."),
    ).toBe(true)
    expect(
      isRewindHookCommand(
        "claude-code",
        hookCommandLine("claude-code", "'/usr/bin/node' /x/rewind.mjs", "/x/rewind-hook"),
      ),
    ).toBe(true)
    expect(isRewindHookCommand("claude-code", "rewind hook gemini-cli")).toBe(false)
    expect(isRewindHookCommand("claude-code", "./hook claude-code")).toBe(false)
    expect(isRewindHookCommand("gemini-cli", 42)).toBe(false)
  })

  it("the CLI: install into the project, --user into HOME, uninstall; the default command runs this rewind", async () => {
    const root = tempDir()
    const home = tempDir()
    const project = await cliEnv(["install", "claude-code", "--json"], root, { HOME: home })
    expect(project.code).toBe(0)
    const line = jsonLines(project.stdout)[0]!
    expect(line).toMatchObject({
      type: "install",
      agent: "claude-code",
      path: join(root, ".claude", "settings.json"),
      changed: true,
    })
    const command = commandsOf(
      JSON.parse(readFileSync(join(root, ".claude", "settings.json"), "utf8")),
      "Stop",
    )[0]!
    // The native client, built at install (node-gyp), with this rewind's Node command as its fallback.
    const native = nativeClientPath(BIN)
    expect(
      native,
      "the native hook client is built (packages/rewind/build/Release/rewind-hook)",
    ).toBeDefined()
    expect(command).toBe(hookCommandLine("claude-code", `${process.execPath} ${BIN}`, native))
    expect(command).toBe(`${native} hook claude-code --fallback '${process.execPath} ${BIN}'`)
    expect(hookClientKind(command)).toBe("native")
    expect(jsonLines(project.stdout)[0]).toMatchObject({ client: "native" })
    // The installed command, run as the agent runs it (a POSIX shell): the hook answers, exit 0.
    const ran = execFileSync("/bin/sh", ["-c", `${command} --workspace ${root}`], {
      encoding: "utf8",
      input: JSON.stringify({ session_id: "installed", cwd: root, hook_event_name: "Stop" }),
      env: { ...process.env, REWIND_HOOK_SERVER: "off" },
    })
    expect(ran).toBe("")
    // `rewind status` says which client the entries run.
    const status = jsonLines((await cliEnv(["status", "--json"], root, { HOME: home })).stdout)
    expect(status.find((l) => l.type === "hook_client")).toMatchObject({
      native,
      installed: [{ agent: "claude-code", client: "native" }],
      warning: null,
    })

    const user = await cliEnv(
      ["install", "gemini-cli", "--user", "--command", "rewind", "--client", "node"],
      root,
      { HOME: home },
    )
    expect(
      commandsOf(JSON.parse(readFileSync(join(home, ".gemini", "settings.json"), "utf8")), "AfterAgent"),
    ).toEqual([`${HOOK_ENV_PREFIX}rewind hook gemini-cli`])
    // The Node client installed while the native one is built: status says so.
    const slow = jsonLines((await cliEnv(["status", "--json"], root, { HOME: home })).stdout)
    expect(slow.find((l) => l.type === "hook_client")?.warning).toMatch(
      /gemini-cli .* run the Node client although the native one is built/,
    )
    expect(user.code).toBe(0)
    expect(user.stdout).toMatch(/added Rewind's hooks for SessionStart, BeforeAgent/)
    expect(existsSync(join(home, ".gemini", "settings.json"))).toBe(true)
    expect(existsSync(join(root, ".gemini"))).toBe(false)
    const again = await cliEnv(["install", "gemini-cli", "--user"], root, { HOME: home })
    expect(again.stdout).toMatch(/already has Rewind's hooks/)

    const removed = await cliEnv(["uninstall", "claude-code", "--json"], root, { HOME: home })
    expect(jsonLines(removed.stdout)[0]).toMatchObject({ type: "uninstall", changed: true })
    expect(JSON.parse(readFileSync(join(root, ".claude", "settings.json"), "utf8"))).toEqual({})

    writeFileSync(join(root, ".claude", "settings.json"), "not json")
    const refused = await cliEnv(["install", "claude-code", "--json"], root, { HOME: home })
    expect(refused.code).toBe(2)
    expect(jsonLines(refused.stdout).at(-1)).toMatchObject({ type: "error", reason: "settings_refused" })
  })
})
