/**
 * `rewind install <agent>` / `rewind uninstall <agent>`: the hook entries Rewind needs, merged
 * into the agent's settings file (Claude Code: `.claude/settings.json`, or `~/.claude/settings.json`
 * with `--user`; Gemini CLI: `.gemini/settings.json` / `~/.gemini/settings.json`).
 *
 * Invariants:
 * - the file is edited as text, not re-serialised (jsonc-parser computes minimal edits): every
 *   byte outside what Rewind inserts stays as the user wrote it, comments and layout included;
 * - idempotent: an event that already has a Rewind entry gets no second one;
 * - uninstall removes exactly Rewind's entries — a hook whose command runs `… rewind… hook <agent>`
 *   — and the event arrays and `hooks` object it leaves empty (install created those), nothing else;
 * - a settings file that does not parse, or whose `hooks` is not an object, is refused whole,
 *   nothing written; the file is replaced atomically (temp file + rename), keeping its mode;
 * - a settings file that is a symbolic link (dotfiles kept in one place) is edited where the link
 *   leads and stays a link, as git edits a linked config: replacing the link by a copy would cut it
 *   off from the user's dotfiles. A link that leads to no file is refused, nothing written;
 * - an entry runs the native hook client when it was built, else the Node command behind
 *   `HOOK_ENV_PREFIX`, which keeps Node from parsing a CA bundle at the start of every hook and
 *   hands the bundle's path on for the server the hook may start (nativeClient.ts).
 */
import { existsSync, lstatSync, mkdirSync, readFileSync, readlinkSync, realpathSync, statSync } from "node:fs"
import { homedir } from "node:os"
import { dirname, join } from "node:path"
import { findNodeAtLocation, type Node, type ParseError, parseTree, printParseErrorCode } from "jsonc-parser"
import { replaceFile } from "../internal/replaceFile.js"
import type { HookAgent } from "./hookEvent.js"

interface Entry {
  readonly event: string
  readonly matcher?: string
}

const CLAUDE_FILE_TOOLS = "Write|Edit|MultiEdit|NotebookEdit"
const GEMINI_FILE_TOOLS = "write_file|replace"

/** The events each agent's hook needs, with the tool matchers that keep it off unrelated tools. */
const ENTRIES: Record<HookAgent, ReadonlyArray<Entry>> = {
  // https://code.claude.com/docs/en/hooks#hook-events
  "claude-code": [
    { event: "SessionStart" },
    { event: "UserPromptSubmit" },
    { event: "PreToolUse", matcher: CLAUDE_FILE_TOOLS },
    { event: "PostToolUse", matcher: `${CLAUDE_FILE_TOOLS}|Bash` },
    { event: "PostToolUseFailure", matcher: `${CLAUDE_FILE_TOOLS}|Bash` },
    { event: "Stop" },
    { event: "SessionEnd" },
  ],
  // https://geminicli.com/docs/hooks/reference#configuration-schema
  "gemini-cli": [
    { event: "SessionStart" },
    { event: "BeforeAgent" },
    { event: "BeforeTool", matcher: GEMINI_FILE_TOOLS },
    { event: "AfterTool", matcher: `${GEMINI_FILE_TOOLS}|run_shell_command` },
    { event: "AfterAgent" },
    { event: "SessionEnd" },
  ],
}

/**
 * The start of every hook command. Node 20 reads and parses the whole `NODE_EXTRA_CA_CERTS`
 * bundle before any script runs (about 80 ms of a 120 ms start on the lead's machine, where every
 * shell sets it), and the hook client opens no TLS connection. The hook runs without it; the
 * original value rides along as `REWIND_HOOK_CA_CERTS`, and the client puts it back for the
 * `rewind serve` it starts (hookClient.ts), which may need it (a TLS PostgreSQL store). The agents
 * run hook commands through a POSIX shell; `env -u` is in GNU, BSD and busybox `env`.
 */
export const HOOK_ENV_PREFIX = `env -u NODE_EXTRA_CA_CERTS REWIND_HOOK_CA_CERTS="\${NODE_EXTRA_CA_CERTS-}" `

const SETTINGS_DIR: Record<HookAgent, string> = { "claude-code": ".claude", "gemini-cli": ".gemini" }

/** The settings file `install` edits: the project's, or the user's with `user`. */
export const settingsPath = (
  agent: HookAgent,
  options: { readonly workspace: string; readonly user: boolean; readonly home?: string },
) =>
  join(options.user ? (options.home ?? homedir()) : options.workspace, SETTINGS_DIR[agent], "settings.json")

/** Whether a hook command is Rewind's hook for this agent (whatever path or wrapper runs it). */
export const isRewindHookCommand = (agent: HookAgent, command: unknown): boolean =>
  typeof command === "string" && new RegExp(`rewind[^\\s"']*["']?\\s+hook\\s+${agent}(\\s|$)`).test(command)

export class SettingsRefused extends Error {}

export interface SettingsChange {
  readonly path: string
  /** Where the edit went when `path` is a symbolic link: the file it leads to. */
  readonly linkTarget?: string
  /** Events that got an entry (install) or lost one (uninstall). */
  readonly events: ReadonlyArray<string>
  readonly changed: boolean
}

const parse = (path: string, text: string): Node | undefined => {
  if (text.trim().length === 0) return undefined
  const errors: Array<ParseError> = []
  const tree = parseTree(text, errors, { allowTrailingComma: true })
  if (errors.length > 0 || tree === undefined || tree.type !== "object") {
    const why =
      errors[0] === undefined ? "its top level is not an object" : printParseErrorCode(errors[0].error)
    throw new SettingsRefused(`${path} is not a settings object (${why}); nothing was changed`)
  }
  const hooks = findNodeAtLocation(tree, ["hooks"])
  if (hooks !== undefined && hooks.type !== "object") {
    throw new SettingsRefused(`${path}: "hooks" is not an object; nothing was changed`)
  }
  return tree
}

const hookCommands = (group: Node): ReadonlyArray<{ readonly node: Node; readonly command: unknown }> => {
  const hooks = findNodeAtLocation(group, ["hooks"])
  if (hooks?.type !== "array") return []
  return (hooks.children ?? []).map((node) => ({
    node,
    command: findNodeAtLocation(node, ["command"])?.value,
  }))
}

/**
 * The file to read and edit for the settings at `path`: `path` itself, or the file a link there
 * leads to (see the header); a link to nothing, or to something that is not a file, is refused.
 */
const settingsFile = (path: string): string => {
  if (lstatSync(path, { throwIfNoEntry: false })?.isSymbolicLink() !== true) return path
  const refused = (why: string) =>
    new SettingsRefused(`${path} is a symbolic link to ${readlinkSync(path)}, ${why}; nothing was changed`)
  let target: string
  try {
    target = realpathSync(path)
  } catch {
    throw refused("which leads to no file (create the file it names, or replace the link)")
  }
  if (!statSync(target).isFile()) throw refused("which is not a file")
  return target
}

/** Replaces `file` by `text` atomically, with the mode it had (a new file gets the default). */
const write = (file: string, text: string) => {
  mkdirSync(dirname(file), { recursive: true })
  const mode = statSync(file, { throwIfNoEntry: false })?.mode
  replaceFile(file, text, mode === undefined ? undefined : mode & 0o7777)
}

const changeAt = (
  path: string,
  file: string,
  events: ReadonlyArray<string>,
  changed: boolean,
): SettingsChange => ({
  path,
  ...(file === path ? {} : { linkTarget: file }),
  events,
  changed,
})

/** The whitespace a line starts with, up to `offset`. */
const indentAt = (text: string, offset: number): string => {
  const lineStart = text.lastIndexOf("\n", offset - 1) + 1
  const lead = /^[ \t]*/.exec(text.slice(lineStart, offset))![0]
  return lead
}

/** The file's own indent unit (the first indented line's), two spaces by default. */
const indentUnit = (text: string): string => /\n([ \t]+)\S/.exec(text)?.[1] ?? "  "

/** `value` as JSON laid out like the file, its first line at the caret, the others at `indent`. */
const pretty = (value: unknown, unit: string, indent: string) =>
  JSON.stringify(value, null, unit).split("\n").join(`\n${indent}`)

/**
 * Inserts `member` (a `"key": value` text, or an array element) as the last member of the
 * container `node`, on its own line, indented like its siblings. Inserted after the previous
 * member's end, with the comma first: exactly what removing it again takes away.
 */
const appendMember = (text: string, node: Node, member: (indent: string) => string, unit: string) => {
  const children = node.children ?? []
  const last = children[children.length - 1]
  if (last !== undefined) {
    const indent = indentAt(text, last.offset)
    const at = last.offset + last.length
    return `${text.slice(0, at)},\n${indent}${member(indent)}${text.slice(at)}`
  }
  const outer = indentAt(text, node.offset)
  const indent = outer + unit
  const open = node.offset + 1
  const close = node.offset + node.length - 1
  return `${text.slice(0, open)}\n${indent}${member(indent)}\n${outer}${text.slice(close)}`
}

/**
 * Adds Rewind's hook entries to the agent's settings file (created when missing); `command` is
 * the whole hook command (nativeClient.ts' `hookCommandLine`).
 */
export const installHooks = (agent: HookAgent, path: string, command: string): SettingsChange => {
  const file = settingsFile(path)
  const original = existsSync(file) ? readFileSync(file, "utf8") : ""
  let text = original.trim().length === 0 ? "{}\n" : original
  const unit = indentUnit(text)
  const added: Array<string> = []
  for (const entry of ENTRIES[agent]) {
    const tree = parse(path, text)!
    const hooks = findNodeAtLocation(tree, ["hooks"])
    const groups = hooks === undefined ? undefined : findNodeAtLocation(tree, ["hooks", entry.event])
    if (groups !== undefined && groups.type !== "array") {
      throw new SettingsRefused(`${path}: hooks.${entry.event} is not an array; nothing was changed`)
    }
    const present = (groups?.children ?? []).some((g) =>
      hookCommands(g).some((h) => isRewindHookCommand(agent, h.command)),
    )
    if (present) continue
    const group = {
      ...(entry.matcher === undefined ? {} : { matcher: entry.matcher }),
      hooks: [
        {
          ...(agent === "gemini-cli" ? { name: "rewind" } : {}),
          type: "command",
          command,
        },
      ],
    }
    text =
      groups !== undefined
        ? appendMember(text, groups, (indent) => pretty(group, unit, indent), unit)
        : hooks !== undefined
          ? appendMember(
              text,
              hooks,
              (indent) => `${JSON.stringify(entry.event)}: ${pretty([group], unit, indent)}`,
              unit,
            )
          : appendMember(
              text,
              tree,
              (indent) => `"hooks": ${pretty({ [entry.event]: [group] }, unit, indent)}`,
              unit,
            )
    added.push(entry.event)
  }
  if (added.length > 0) write(file, text)
  return changeAt(path, file, added, added.length > 0)
}

/**
 * Removes a container member (a property node, or an array element) with the separator before it:
 * the exact reverse of `appendMember`. A first member takes the separator after it instead, and
 * an only member leaves its container empty.
 */
const removeMember = (text: string, member: Node) => {
  const siblings = member.parent?.children ?? []
  const index = siblings.indexOf(member)
  const end = member.offset + member.length
  if (index > 0) {
    const previous = siblings[index - 1]!
    return text.slice(0, previous.offset + previous.length) + text.slice(end)
  }
  const next = siblings[index + 1]
  if (next !== undefined) return text.slice(0, member.offset) + text.slice(next.offset)
  const container = member.parent!
  return text.slice(0, container.offset + 1) + text.slice(container.offset + container.length - 1)
}

/** Removes Rewind's hook entries for the agent (and the containers they leave empty). */
export const uninstallHooks = (agent: HookAgent, path: string): SettingsChange => {
  const file = settingsFile(path)
  if (!existsSync(file)) return changeAt(path, file, [], false)
  let text = readFileSync(file, "utf8")
  const removed: Array<string> = []
  // One removal per pass: every edit moves the offsets of what follows it.
  for (;;) {
    const tree = parse(path, text)
    const hooks = tree === undefined ? undefined : findNodeAtLocation(tree, ["hooks"])
    let target: { readonly node: Node; readonly event: string } | undefined
    for (const prop of hooks?.children ?? []) {
      const event = prop.children?.[0]?.value as string
      const groups = prop.children?.[1]
      if (groups?.type !== "array") continue
      const list = groups.children ?? []
      for (let g = 0; g < list.length && target === undefined; g++) {
        const commands = hookCommands(list[g]!)
        const ours = commands.findIndex((h) => isRewindHookCommand(agent, h.command))
        if (ours < 0) continue
        // The smallest thing that holds only Rewind's hook: the event, the group, or the hook.
        const node = commands.length === 1 ? (list.length === 1 ? prop : list[g]!) : commands[ours]!.node
        target = { node, event }
      }
      if (target !== undefined) break
    }
    if (target === undefined) break
    text = removeMember(text, target.node)
    if (!removed.includes(target.event)) removed.push(target.event)
  }
  if (removed.length === 0) return changeAt(path, file, [], false)
  const tree = parse(path, text)
  const hooks = tree === undefined ? undefined : findNodeAtLocation(tree, ["hooks"])
  if (hooks?.parent !== undefined && (hooks.children ?? []).length === 0)
    text = removeMember(text, hooks.parent)
  write(file, text)
  return changeAt(path, file, removed, true)
}
