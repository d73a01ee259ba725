// The store survives a cleaned workspace (storeLayout.ts): `git clean -fdx`, `git clean -fdX` and
// `git stash --all` remove ignored files, and a store inside the workspace is ignored. A store
// directory Rewind makes keeps its database in a nested repository git leaves alone; the built bin
// and the facade find every point after each, put back what the clean took, and a restore brings
// back what the clean deleted (of what the points hold: ignored files are never captured); an
// agent's clean through the Claude Code hook is undone by `restore --turn`. Links and the layouts made before are taken as they were.
import * as fs from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "@effect/vitest"
import type { TurnId } from "@rewind/contracts"
import Database from "better-sqlite3"
import { openRewind } from "../src/index.js"
import { claudeShellTurn, cli, git, jsonLines, ownProcessCli, tempDir } from "./cliHarness.js"
import { okValue } from "./okValue.js"

/** A git repository with a tracked file, an untracked one, an ignored build output. */
const repository = () => {
  const root = tempDir()
  git(root, "init", "-q", "-b", "main")
  fs.writeFileSync(join(root, ".gitignore"), "build/\n")
  fs.writeFileSync(join(root, "tracked.txt"), "tracked v1\n")
  git(root, "add", ".")
  git(root, "commit", "-q", "-m", "one")
  fs.writeFileSync(join(root, "notes.txt"), "untracked work\n")
  fs.mkdirSync(join(root, "build"))
  fs.writeFileSync(join(root, "build", "out.js"), "built\n")
  return root
}

const CLEANS: ReadonlyArray<readonly [string, ReadonlyArray<string>]> = [
  ["git clean -fdx", ["clean", "-fdxq"]],
  ["git clean -fdX", ["clean", "-fdXq"]],
  ["git stash --all", ["stash", "--all", "-q"]],
]

const pointIds = async (root: string) =>
  jsonLines((await cli(["points", "--workspace", root, "--json"])).stdout)
    .map((line) => line.pointId)
    .filter((id): id is string => typeof id === "string")

describe("a store directory Rewind makes: the guarded layout", () => {
  it("holds the database under rewind-data/ with rewind.db a link to it, and stays out of git status", async () => {
    const root = repository()
    expect((await cli(["init", "--workspace", root])).code).toBe(0)
    const store = join(root, ".rewind")
    expect(fs.readlinkSync(join(store, "rewind.db"))).toBe("rewind-data/rewind.db")
    expect(fs.lstatSync(join(store, "rewind-data", "rewind.db")).isFile()).toBe(true)
    expect(fs.readFileSync(join(store, "rewind-data", ".git", "HEAD"), "utf8")).toMatch(/^ref: refs\//)
    expect(git(root, "status", "--porcelain")).toBe("?? notes.txt\n")
    const status = jsonLines((await cli(["status", "--workspace", root, "--json"])).stdout)
    expect(status.find((line) => line.type === "store_layout")).toMatchObject({
      layout: "guarded",
      warning: null,
    })
    // A tool naming rewind.db reaches the database.
    const db = new Database(join(store, "rewind.db"), { readonly: true })
    expect(db.prepare("select count(*) as n from sessions").get()).toEqual({ n: 0 })
    db.close()
  })

  for (const [label, args] of CLEANS) {
    it(`keeps every point through ${label}, puts back what it took, and a restore brings back the deleted files`, async () => {
      const root = repository()
      expect((await cli(["init", "--workspace", root])).code).toBe(0)
      expect((await cli(["capture", "--workspace", root])).code).toBe(0)
      fs.writeFileSync(join(root, "notes.txt"), "untracked work, edited\n")
      const second = jsonLines((await cli(["capture", "--workspace", root, "--json"])).stdout)
      const last = second.find((line) => line.type === "point")?.pointId
      if (typeof last !== "string") throw new Error("no point captured")
      const before = await pointIds(root)
      expect(before).toHaveLength(2)

      const said = git(root, ...args)
      if (label.startsWith("git clean"))
        expect(fs.existsSync(join(root, "notes.txt"))).toBe(label.endsWith("X"))
      else expect(said).toBe("")
      expect(fs.existsSync(join(root, "build"))).toBe(false)
      // What git took: the .gitignore and the link; the guarded directory is left.
      expect(fs.existsSync(join(root, ".rewind", "rewind-data", "rewind.db"))).toBe(true)

      expect(await pointIds(root)).toEqual(before)
      expect(fs.readlinkSync(join(root, ".rewind", "rewind.db"))).toBe("rewind-data/rewind.db")
      expect(fs.readFileSync(join(root, ".rewind", ".gitignore"), "utf8")).toMatch(/^\*$/m)
      expect(git(root, "status", "--porcelain", "--untracked-files=all")).not.toMatch(/\.rewind/)

      const preview = jsonLines((await cli(["preview", last, "--workspace", root, "--json"])).stdout)
      const token = preview.find((line) => typeof line.token === "string")?.token
      const restore = await cli([
        "restore",
        last,
        "--workspace",
        root,
        "--json",
        ...(typeof token === "string" ? ["--token", token] : []),
      ])
      expect(restore.code, restore.stdout + restore.stderr).toBe(0)
      // What the point holds comes back; build/ is ignored, so never captured nor restored.
      expect(fs.readFileSync(join(root, "notes.txt"), "utf8")).toBe("untracked work, edited\n")
      expect(fs.readFileSync(join(root, "tracked.txt"), "utf8")).toBe("tracked v1\n")
    })
  }

  it("the facade: a host that stays open across a clean has it mended by its next call; a new open finds every point", async () => {
    const root = repository()
    const store = join(root, ".rewind")
    const host = await openRewind({ workspaceRoot: root, durability: "atomic" })
    const session = okValue(await host.createSession({ title: "kept", cwd: root }))
    okValue(await host.capturePoint(session.id, "t1" as TurnId))
    git(root, "clean", "-fdxq")
    expect(fs.existsSync(join(store, ".gitignore"))).toBe(false)
    expect(git(root, "status", "--porcelain")).toMatch(/\?\? \.rewind\//)
    okValue(await host.capturePoint(session.id, "t2" as TurnId))
    expect(fs.readlinkSync(join(store, "rewind.db"))).toBe("rewind-data/rewind.db")
    expect(git(root, "status", "--porcelain")).not.toMatch(/\.rewind/)
    await host.close()
    git(root, "stash", "--all", "-q")
    const again = await openRewind({ workspaceRoot: root, durability: "atomic", create: false })
    expect(okValue(await again.listPoints(session.id)).length).toBe(2)
    await again.close()
  })
})

describe("an agent's git clean -fdx through the Claude Code hook (the built bin)", () => {
  it("the store made by the first hook survives it, and restore --turn 1 brings back the untracked work", async () => {
    const root = repository()
    await claudeShellTurn(root, "tidy", "clean the build", () => {
      git(root, "clean", "-fdxq")
    })
    expect(fs.existsSync(join(root, "notes.txt"))).toBe(false)
    const preview = await ownProcessCli(["restore", "--turn", "1", "--json"], root)
    expect(preview.code, preview.stderr).toBe(0)
    const plan = jsonLines(preview.stdout).find((r) => r.type === "turn_preview")!
    expect(plan.changes).toEqual([{ path: "notes.txt", action: "write" }])
    const applied = await ownProcessCli(["restore", "--turn", "1", "--token", String(plan.token)], root)
    expect(applied.code, applied.stderr).toBe(0)
    expect(fs.readFileSync(join(root, "notes.txt"), "utf8")).toBe("untracked work\n")
    expect(git(root, "status", "--porcelain")).toBe("?? notes.txt\n")
  })
})

describe("stores laid out otherwise", () => {
  it("a store directory that existed (a named dir, a .rewind made by hand) keeps rewind.db in it", async () => {
    const root = repository()
    const named = join(tempDir(), "named")
    fs.mkdirSync(named)
    fs.mkdirSync(join(root, ".rewind"))
    for (const args of [["--dir", named], []]) {
      expect((await cli(["init", "--workspace", root, ...args])).code).toBe(0)
      expect((await cli(["capture", "--workspace", root, ...args])).code).toBe(0)
    }
    for (const dir of [named, join(root, ".rewind")]) {
      expect(fs.lstatSync(join(dir, "rewind.db")).isFile()).toBe(true)
      expect(fs.existsSync(join(dir, "rewind-data"))).toBe(false)
    }
    // status says which a clean would take: the one inside the workspace, not the one outside it.
    const layoutOf = async (args: ReadonlyArray<string>) =>
      jsonLines((await cli(["status", "--workspace", root, "--json", ...args])).stdout).find(
        (line) => line.type === "store_layout",
      )
    expect(await layoutOf(["--dir", named])).toMatchObject({ layout: "flat", warning: null })
    expect(await layoutOf([])).toMatchObject({
      layout: "flat",
      warning: expect.stringMatching(/git clean -x/),
    })
  })

  it("a rewind.db link that is not Rewind's, or a rewind-data that is a link, is refused and nothing is written there", async () => {
    const root = repository()
    expect((await cli(["init", "--workspace", root])).code).toBe(0)
    const store = join(root, ".rewind")
    const outside = join(tempDir(), "outside.db")
    fs.writeFileSync(outside, "not a store")
    fs.unlinkSync(join(store, "rewind.db"))
    fs.symlinkSync(outside, join(store, "rewind.db"))
    const status = await cli(["status", "--workspace", root])
    expect(status.code).toBe(2)
    expect(status.stderr).toMatch(/rewind\.db is a symbolic link/)
    expect(fs.readFileSync(outside, "utf8")).toBe("not a store")

    fs.unlinkSync(join(store, "rewind.db"))
    const elsewhere = join(tempDir(), "data")
    fs.renameSync(join(store, "rewind-data"), elsewhere)
    fs.symlinkSync(elsewhere, join(store, "rewind-data"))
    const linked = await cli(["capture", "--workspace", root])
    expect(linked.code).toBe(2)
    expect(linked.stderr).toMatch(/rewind-data is a symbolic link/)
    expect(fs.readdirSync(elsewhere).sort()).toEqual([".git", "rewind.db"])
  })
})
