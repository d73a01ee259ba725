/**
 * The native hook client (native/hookClient.c, built at install by node-gyp into
 * `<package>/build/Release/rewind-hook`): where the built `rewind` finds it, the hook command
 * that runs it, and which client a settings file's hook entries run (`rewind status`, `doctor`).
 *
 * Invariants:
 * - the client is found from the running bin's real path (`dist/cli/<bin>` -> `../../build/...`),
 *   so it is the one built with this package wherever the package is installed; a client that is
 *   missing or not executable is "not built", never guessed elsewhere;
 * - the native command carries the Node command as its `--fallback`: everything off the fast path
 *   runs exactly what the Node command would (the native client applies the CA-bundle prefix's
 *   rule itself, so the native command has no prefix).
 */
import { accessSync, constants, readFileSync, realpathSync } from "node:fs"
import { homedir } from "node:os"
import { basename, dirname, join } from "node:path"
import { findNodeAtLocation, parseTree } from "jsonc-parser"
import type { HookAgent } from "./hookEvent.js"
import { HOOK_ENV_PREFIX, isRewindHookCommand, settingsPath } from "./hookInstall.js"

export const NATIVE_CLIENT_NAME = "rewind-hook"

/** The native client built with the package whose bin `script` is, or undefined when not built. */
export const nativeClientPath = (script: string | undefined): string | undefined => {
  if (script === undefined) return undefined
  try {
    const path = join(dirname(realpathSync(script)), "..", "..", "build", "Release", NATIVE_CLIENT_NAME)
    accessSync(path, constants.X_OK)
    return path
  } catch {
    return undefined
  }
}

/** A word for a POSIX shell. */
export const shellQuote = (s: string) => (/^[\w@%+=:,./-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`)

/**
 * The command a hook entry runs: the native client with the Node command (`node`, e.g.
 * `'/usr/bin/node' '/…/rewind.mjs'` or `rewind`) as its fallback, or that Node command behind
 * `HOOK_ENV_PREFIX` when there is no native client.
 */
export const hookCommandLine = (agent: HookAgent, node: string, native: string | undefined) =>
  native === undefined
    ? `${HOOK_ENV_PREFIX}${node} hook ${agent}`
    : `${shellQuote(native)} hook ${agent} --fallback ${shellQuote(node)}`

export type HookClientKind = "native" | "node"

/** Which client a Rewind hook command runs: the native one when its first word is that binary. */
export const hookClientKind = (command: string): HookClientKind => {
  const first = /^\s*(?:'([^']*)'|(\S+))/.exec(command)
  const word = first?.[1] ?? first?.[2] ?? ""
  return basename(word) === NATIVE_CLIENT_NAME ? "native" : "node"
}

export interface InstalledHookClient {
  readonly agent: HookAgent
  readonly settings: string
  readonly client: HookClientKind
  readonly command: string
}

/** The Rewind hook commands in the project's and the user's settings of each agent (first per file). */
export const installedHookClients = (
  workspace: string,
  home = homedir(),
): ReadonlyArray<InstalledHookClient> => {
  const found: Array<InstalledHookClient> = []
  for (const agent of ["claude-code", "gemini-cli"] as const) {
    for (const user of [false, true]) {
      const settings = settingsPath(agent, { workspace, user, home })
      let text: string
      try {
        text = readFileSync(settings, "utf8")
      } catch {
        continue
      }
      const hooks = findNodeAtLocation(parseTree(text) ?? { type: "null", offset: 0, length: 0 }, ["hooks"])
      const commands = (hooks?.children ?? []).flatMap((event) =>
        (event.children?.[1]?.children ?? []).flatMap((group) =>
          (findNodeAtLocation(group, ["hooks"])?.children ?? []).map(
            (hook) => findNodeAtLocation(hook, ["command"])?.value as unknown,
          ),
        ),
      )
      const command = commands.find((c): c is string => isRewindHookCommand(agent, c))
      if (command !== undefined) found.push({ agent, settings, client: hookClientKind(command), command })
    }
  }
  return found
}

export interface HookClientStatus {
  /** The native client this `rewind` would install, or null when it was not built. */
  readonly native: string | null
  readonly installed: ReadonlyArray<InstalledHookClient>
  /** What makes hooks slower than they could be, if anything (said, never silent). */
  readonly warning: string | null
  /** One line for humans. */
  readonly detail: string
}

/** Which hook client is built and which the workspace's (and the user's) settings run. */
export const hookClientStatus = (
  workspace: string,
  script: string | undefined,
  home?: string,
): HookClientStatus => {
  const native = nativeClientPath(script) ?? null
  const installed = installedHookClients(workspace, home)
  const where = (i: InstalledHookClient) => `${i.agent} (${i.settings})`
  const nodeOnes = installed.filter((i) => i.client === "node")
  const missing = installed.filter((i) => {
    if (i.client !== "native") return false
    const first = /^\s*(?:'([^']*)'|(\S+))/.exec(i.command)
    try {
      accessSync((first?.[1] ?? first?.[2])!, constants.X_OK)
      return false
    } catch {
      return true
    }
  })
  const warning =
    missing.length > 0
      ? `the native hook client installed for ${missing.map(where).join(", ")} is missing: those hooks fail to start; run \`rewind install\` again`
      : native === null
        ? `the native hook client was not built (node-gyp needs python3, make and a C compiler): ${installed.length === 0 ? "`rewind install` would write" : "hooks run"} the Node client, which starts slower`
        : nodeOnes.length > 0
          ? `the hooks of ${nodeOnes.map(where).join(", ")} run the Node client although the native one is built: \`rewind uninstall\` then \`rewind install\` switches them`
          : null
  const detail =
    installed.length === 0
      ? `none installed; \`rewind install\` would write the ${native === null ? "Node" : "native"} client`
      : installed.map((i) => `${i.client} for ${where(i)}`).join("; ")
  return { native, installed, warning, detail }
}
