/**
 * Settings of the file-rewind programs, as a Context.Reference so hosts override them only when
 * they need to. The shell-like tool list decides which checkpoints preview/apply leaves alone:
 * a shell command's effect on a file is not something a per-tool snapshot can be trusted to undo.
 */
import { Context } from "effect"

export interface FileRewindSettingsValue {
  /** Tool names (compared case-insensitively) whose changes preview/apply lists as `ignored`. */
  readonly shellLikeTools: ReadonlyArray<string>
  /** Text larger than this (either side, in bytes) is recorded without a structured patch. */
  readonly maxPatchBytes: number
}

export const DEFAULT_SHELL_LIKE_TOOLS: ReadonlyArray<string> = [
  "bash",
  "shell",
  "sh",
  "zsh",
  "exec",
  "execute",
  "execute_command",
  "run_command",
  "run_terminal_cmd",
  "terminal",
  "powershell",
  "cmd",
]

export const defaultFileRewindSettings: FileRewindSettingsValue = {
  shellLikeTools: DEFAULT_SHELL_LIKE_TOOLS,
  maxPatchBytes: 2 * 1024 * 1024,
}

export class FileRewindSettings extends Context.Reference<FileRewindSettings>()(
  "@rewind/core/FileRewindSettings",
  { defaultValue: (): FileRewindSettingsValue => defaultFileRewindSettings },
) {}

export const isShellLikeTool = (settings: FileRewindSettingsValue, toolName: string): boolean => {
  const name = toolName.toLowerCase()
  return settings.shellLikeTools.some((t) => t.toLowerCase() === name)
}
