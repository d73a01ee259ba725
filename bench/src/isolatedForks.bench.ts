/**
 * Isolated forks (issue 28, item 7) on the babel shape (`bench/corpora/babel.shape.tsv.gz`):
 *   - materialising a fork's own tree (`forkAtMessage` with `{ mode: "isolated" }`, the embedded
 *     default store, in process) against `git worktree add --detach` of a commit of the same tree
 *     (whole process, spawned by the harness's helper), timed in the same rounds;
 *   - a merge of 100 files changed in the child back into the parent (`previewMerge` then
 *     `applyMerge`: both trees scanned and hashed, the three-way plan, the merge point, the
 *     journaled point restore with its rescue point), reported on its own (no git step does the
 *     same work: `git merge` needs both trees committed first).
 * Both sides materialise what the tree's .gitignore files keep; Rewind's store lies outside the
 * tree. The filesystem of the run decides whether Rewind clones (FICLONE) or writes: the notes say
 * which it did.
 */
import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import type { MessageId, SessionId, TurnId } from "@rewind/contracts"
import { openRewind } from "rewind"
import { GIT } from "./baselines/shadowGit.js"
import { timeProcess } from "./harness/processTiming.js"
import type { BenchCase } from "./harness/types.js"

const WHOLE_TREE = { maxFiles: 10_000_000, timeBudgetMs: 30 * 60_000 } as const
const MERGE_FILES = 100
const QUICK_FILES = 1_000

const must = <A>(
  o: { ok: true; value: A } | { ok: false; refusal: { message: string } },
  what: string,
): A => {
  if (!o.ok) throw new Error(`${what} refused: ${o.refusal.message}`)
  return o.value
}

export const isolatedForks: BenchCase = {
  name: "isolated-fork",
  group: "real shapes",
  description:
    "babel shape (a generated 1,000-file tree in quick mode): materialise an isolated fork's tree against git worktree add of the same tree; merge 100 changed files back",
  sizes: () => [1],
  sizeUnit: "× babel",
  run: async (ctx) => {
    // Quick mode (and `npm test`'s run of it) checks the plumbing on a small generated tree, once
    // per figure; a full run measures the babel shape.
    const quick = ctx.mode === "quick"
    const ws = quick ? ctx.workspace(QUICK_FILES) : ctx.shapeWorkspace("babel", 1)
    const size = quick
      ? { value: QUICK_FILES, unit: "generated files" }
      : { value: 1, unit: `× babel shape (${ws.files.length.toLocaleString("en-US")} files)` }
    const budget = quick ? { singleRunAboveMs: 0 } : {}
    const rewind = await openRewind({ workspaceRoot: ws.root, dir: ctx.tempDir("store") })
    try {
      const session = must(await rewind.createSession({ title: "bench", cwd: ws.root }), "createSession")
      const sessionId = session.id as SessionId
      const { turnId } = must(await rewind.appendUserMessage(sessionId, { text: "go" }), "appendUserMessage")
      const captured = must(
        await rewind.capturePoint(sessionId, turnId as TurnId, { settings: WHOLE_TREE }),
        "capturePoint",
      )
      if (captured._tag !== "Captured") throw new Error(captured.reason)
      const reply = must(
        await rewind.appendReply(sessionId, { turnId, parts: [{ kind: "text", text: "ok" }] }),
        "appendReply",
      )
      must(await rewind.completeTurnWithBoundary(sessionId, turnId), "completeTurnWithBoundary")

      // The same tree as a commit in a shadow repository, for `git worktree add`.
      const shadow = ctx.shadowGit(ws.root)
      const { tree } = shadow.snapshot()
      const env = {
        PATH: process.env.PATH ?? "/usr/bin:/bin",
        HOME: ctx.tempDir("git-home"),
        GIT_CONFIG_NOSYSTEM: "1",
        GIT_CONFIG_GLOBAL: "/dev/null",
        GIT_AUTHOR_NAME: "b",
        GIT_AUTHOR_EMAIL: "b@b",
        GIT_COMMITTER_NAME: "b",
        GIT_COMMITTER_EMAIL: "b@b",
      }
      const commit = timeProcess(GIT, [`--git-dir=${shadow.gitDir}`, "commit-tree", tree, "-m", "tree"], {
        env,
      }).stdout.trim()

      let n = 0
      let last: { cloned: number; written: number; files: number } | undefined
      const targets = ctx.tempDir("trees")
      const made: Array<string> = []
      await ctx.compare({
        series: "materialise an isolated fork's tree (facade)",
        size,
        subject: {
          kind: "in-process",
          label: "forkAtMessage { mode: isolated }",
          fn: async () => {
            const into = join(targets, `rewind-${n++}`)
            made.push(into)
            const fork = must(
              await rewind.forkAtMessage(sessionId, reply.messageId as MessageId, undefined, {
                mode: "isolated",
                root: into,
              }),
              "forkAtMessage",
            )
            last = fork.isolated
          },
          afterEach: () => {
            for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true })
          },
        },
        baseline: {
          kind: "process",
          label: "git worktree add --detach (same tree, committed)",
          run: (probe) => {
            const into = join(targets, `git-${n++}`)
            const result = timeProcess(
              GIT,
              [`--git-dir=${shadow.gitDir}`, "worktree", "add", "-q", "--detach", into, commit],
              { env, measureMemory: probe.measureMemory },
            )
            timeProcess(GIT, [`--git-dir=${shadow.gitDir}`, "worktree", "remove", "--force", into], { env })
            return result
          },
        },
        bytes: ws.totalBytes,
        expectedGrowth: "whole",
        budget,
        notes: [
          `${quick ? "generated tree" : "babel shape"}: ${ws.files.length} files`,
          "Rewind: openRewind (embedded default), store outside the tree; git: a bare shadow repository",
        ],
      })
      ctx.log(`last isolated tree: ${JSON.stringify(last)}`)

      // A merge of 100 changed files: one child, 100 of its files changed before each merge.
      const into = join(ctx.tempDir("merge"), "child")
      const child = must(
        await rewind.forkAtMessage(sessionId, reply.messageId as MessageId, undefined, {
          mode: "isolated",
          root: into,
        }),
        "forkAtMessage",
      ).childSessionId as SessionId
      // Files the child's tree holds (what the ignore rules keep), in the shape's order.
      const paths = ws.files
        .map((f) => f.path)
        .filter((p) => existsSync(join(into, p)))
        .slice(0, MERGE_FILES)
      let round = 0
      const scratch = ctx.tempDir("merge-limit")
      await ctx.compare({
        series: `merge ${MERGE_FILES} changed files back (previewMerge + applyMerge)`,
        size,
        subject: {
          kind: "in-process",
          label: "previewMerge + applyMerge",
          beforeEach: () => {
            round++
            for (const p of paths.slice(0, MERGE_FILES)) {
              const file = join(into, p)
              writeFileSync(file, `${readFileSync(file, "utf8")}\n// merge round ${round}\n`)
            }
          },
          fn: async () => {
            const preview = must(await rewind.previewMerge(sessionId, child), "previewMerge")
            if (preview.files.length !== MERGE_FILES || preview.restore?.token === undefined) {
              throw new Error(
                `unexpected merge preview: ${preview.files.length} files, ${preview.conflicts.length} conflicts`,
              )
            }
            must(
              await rewind.applyMerge(sessionId, preview.mergePointId!, preview.restore.token),
              "applyMerge",
            )
          },
          // Untimed: the merge taken away again (redo), so the parent holds the fork base and the
          // next round's child changes merge cleanly rather than clash with this round's.
          afterEach: async () => {
            must(await rewind.redo(sessionId), "redo")
          },
        },
        // The floor of any merge of these files: read each changed file of the child and write it
        // into the parent's place (here a scratch directory), in the same rounds.
        limit: {
          kind: "in-process",
          label: `read + write ${MERGE_FILES} files`,
          fn: () => {
            for (const [i, p] of paths.entries())
              writeFileSync(join(scratch, `${i}`), readFileSync(join(into, p)))
          },
        },
        items: { count: MERGE_FILES, unit: "files merged" },
        expectedGrowth: "whole",
        budget,
        notes: ["both trees are scanned and hashed each time (stat caches vouch for unchanged files)"],
      })
    } finally {
      await rewind.close()
    }
  },
}
