/**
 * One file's diff from the engine's unified patch text, parsed into `diff`'s structured patch
 * (`parsePatch`) and shown unified or side by side. A file with no patch (binary, over the size
 * limit, a link, a mode change, content missing) is described, never rendered. Lines are text nodes.
 */
import { parsePatch } from "diff"
import { useState } from "preact/hooks"
import { size } from "./common.js"
import type { PointDiffEntry } from "./rpc.js"

const NO_PATCH: Record<string, string> = {
  binary: "a binary file: not shown",
  too_large: "over the diff size limit: not shown",
  link: "a symbolic link",
  mode_only: "only its mode changed",
  content_missing: "its content is not in the store",
  disabled: "diffs were not asked for",
}

type Line = {
  readonly kind: " " | "+" | "-"
  readonly text: string
  readonly old?: number
  readonly new?: number
}

const linesOf = (hunk: { oldStart: number; newStart: number; lines: ReadonlyArray<string> }) => {
  const out: Array<Line> = []
  let o = hunk.oldStart
  let n = hunk.newStart
  for (const raw of hunk.lines) {
    const kind = raw[0]
    const text = raw.slice(1)
    if (kind === "+") out.push({ kind, text, new: n++ })
    else if (kind === "-") out.push({ kind, text, old: o++ })
    else if (kind === " ") out.push({ kind, text, old: o++, new: n++ })
  }
  return out
}

/** Side by side: removed and added runs paired row by row, context on both sides. */
const pairs = (lines: ReadonlyArray<Line>) => {
  const rows: Array<[Line | undefined, Line | undefined]> = []
  let i = 0
  while (i < lines.length) {
    if (lines[i]!.kind === " ") {
      rows.push([lines[i], lines[i]])
      i++
      continue
    }
    const removed: Array<Line> = []
    const added: Array<Line> = []
    while (i < lines.length && lines[i]!.kind === "-") removed.push(lines[i++]!)
    while (i < lines.length && lines[i]!.kind === "+") added.push(lines[i++]!)
    for (let k = 0; k < Math.max(removed.length, added.length); k++) rows.push([removed[k], added[k]])
  }
  return rows
}

const sideOf = (entry: PointDiffEntry["point"]) =>
  entry === null ? "absent" : entry.kind === "file" ? `file, ${size(entry.size)}` : `link → ${entry.target}`

export const DiffView = ({ entry }: { entry: PointDiffEntry }) => {
  const [mode, setMode] = useState<"unified" | "split">("unified")
  const header = (
    <p class="muted">
      then: {sideOf(entry.point)} · now: {sideOf(entry.now)}
    </p>
  )
  if (entry.patch === undefined)
    return (
      <div class="diff" data-testid="diff">
        {header}
        <p class="no-patch">{entry.noPatch === undefined ? "no content change" : NO_PATCH[entry.noPatch]}</p>
      </div>
    )
  const hunks = parsePatch(entry.patch).flatMap((p) => p.hunks)
  return (
    <div class="diff" data-testid="diff">
      {header}
      <div class="toggle">
        <button type="button" aria-pressed={mode === "unified"} onClick={() => setMode("unified")}>
          Unified
        </button>
        <button type="button" aria-pressed={mode === "split"} onClick={() => setMode("split")}>
          Side by side
        </button>
      </div>
      {hunks.length === 0 && <p class="no-patch">no line changed</p>}
      {hunks.map((hunk) => {
        const lines = linesOf(hunk)
        return (
          <table class={`hunk ${mode}`} key={`${hunk.oldStart}-${hunk.newStart}`}>
            <thead>
              <tr>
                <th colSpan={mode === "unified" ? 3 : 4}>
                  @@ -{hunk.oldStart},{hunk.oldLines} +{hunk.newStart},{hunk.newLines} @@
                </th>
              </tr>
            </thead>
            <tbody>
              {mode === "unified"
                ? lines.map((l) => (
                    <tr
                      key={`${l.kind}${l.old ?? ""}:${l.new ?? ""}`}
                      class={`line l${l.kind === "+" ? "add" : l.kind === "-" ? "del" : "ctx"}`}
                    >
                      <td class="num">{l.old ?? ""}</td>
                      <td class="num">{l.new ?? ""}</td>
                      <td class="code">
                        {l.kind}
                        {l.text}
                      </td>
                    </tr>
                  ))
                : pairs(lines).map(([a, b]) => (
                    <tr key={`${a?.old ?? ""}:${b?.new ?? ""}`} class="line">
                      <td class="num">{a?.old ?? ""}</td>
                      <td class={`code ${a === undefined ? "" : a.kind === "-" ? "ldel" : "lctx"}`}>
                        {a?.text ?? ""}
                      </td>
                      <td class="num">{b?.new ?? ""}</td>
                      <td class={`code ${b === undefined ? "" : b.kind === "+" ? "ladd" : "lctx"}`}>
                        {b?.text ?? ""}
                      </td>
                    </tr>
                  ))}
            </tbody>
          </table>
        )
      })}
    </div>
  )
}
