// Properties of isolated forks on random workspaces and edits (effect/FastCheck, seeded, small
// runs), through the facade on the embedded default (SQLite + real files):
// - materialising a fork then capturing the child's tree gives the fork point's manifest (bytes,
//   modes, links: the same manifest, so the same content address);
// - a merge of disjoint changes equals applying both sides;
// - a merge never overwrites a file both sides changed in conflict;
// - nothing done in an isolated child (edits, captures, a point restore) changes the parent's tree.
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { afterEach, describe, expect, it } from "@effect/vitest"
import type { SessionId, TurnId } from "@rewind/contracts"
import { FastCheck as fc } from "effect"
import { openRewind, type Rewind } from "../src/index.js"
import { snapshot } from "./isolatedForkKit.js"
import { okValue } from "./okValue.js"

const temps: Array<string> = []
const temp = () => {
  const dir = mkdtempSync(join(tmpdir(), "rewind-isolated-prop-"))
  temps.push(dir)
  return dir
}
afterEach(() => {
  for (const dir of temps.splice(0)) rmSync(dir, { recursive: true, force: true })
})

type Entry = { kind: "file"; content: Uint8Array; mode: number } | { kind: "link"; target: string }

const writeTree = (root: string, tree: ReadonlyMap<string, Entry>) => {
  for (const [path, e] of tree) {
    const full = join(root, path)
    mkdirSync(dirname(full), { recursive: true })
    if (e.kind === "link") symlinkSync(e.target, full)
    else {
      writeFileSync(full, e.content)
      chmodSync(full, e.mode)
    }
  }
}

const name = fc.constantFrom("a", "b", "c", "src", "lib", "x.txt", "y.md", "z.bin")
const pathArb = fc.array(name, { minLength: 1, maxLength: 3 }).map((parts) => parts.join("/"))
const fileArb = fc.record({
  kind: fc.constant("file" as const),
  content: fc.oneof(
    fc.uint8Array({ maxLength: 64 }),
    fc
      .array(fc.constantFrom("one", "two", "three", "four"), { maxLength: 6 })
      .map((l) => new TextEncoder().encode(l.map((x) => `${x}\n`).join(""))),
  ),
  mode: fc.constantFrom(0o644, 0o755, 0o600),
})

/** A tree whose paths never make a file a directory of another (no `a` and `a/b` together). */
const treeArb = fc.array(fc.tuple(pathArb, fileArb), { minLength: 1, maxLength: 10 }).chain((files) => {
  const tree = new Map<string, Entry>()
  for (const [path, entry] of files) {
    const clash = [...tree.keys()].some((p) => p.startsWith(`${path}/`) || path.startsWith(`${p}/`))
    if (!clash && !tree.has(path)) tree.set(path, entry)
  }
  const targets = [...tree.keys()].filter((p) => !p.includes("/"))
  return fc.constant(tree).chain((t) =>
    targets.length === 0
      ? fc.constant(t)
      : fc.option(fc.constantFrom(...targets)).map((target) => {
          if (target !== null && !t.has("ln")) t.set("ln", { kind: "link", target })
          return t
        }),
  )
})

const start = async (tree: ReadonlyMap<string, Entry>) => {
  const root = temp()
  writeTree(root, tree)
  const rewind = await openRewind({ workspaceRoot: root, durability: "atomic" })
  const session = okValue(await rewind.createSession({ title: "p", cwd: root }))
  const { turnId } = okValue(await rewind.appendUserMessage(session.id, { text: "go" }))
  const captured = okValue(await rewind.capturePoint(session.id, turnId as TurnId))
  if (captured._tag !== "Captured") throw new Error("not captured")
  const reply = okValue(
    await rewind.appendReply(session.id, { turnId, parts: [{ kind: "text", text: "ok" }] }),
  )
  okValue(await rewind.completeTurnWithBoundary(session.id, turnId))
  const into = join(temp(), "tree")
  const fork = okValue(
    await rewind.forkAtMessage(session.id, reply.messageId, undefined, { mode: "isolated", root: into }),
  )
  return {
    root,
    rewind,
    parent: session.id,
    child: fork.childSessionId as SessionId,
    into,
    point: captured.point,
  }
}

const captureTurn = async (rewind: Rewind, sessionId: SessionId, text: string) => {
  const { turnId } = okValue(await rewind.appendUserMessage(sessionId, { text }))
  const c = okValue(await rewind.capturePoint(sessionId, turnId as TurnId))
  if (c._tag !== "Captured") throw new Error(c.reason)
  return c.point
}

const lines = (n: number, tag: string) => Array.from({ length: n }, (_, i) => `${tag}${i}\n`).join("")

describe("isolated forks: properties", () => {
  it("materialise then capture equals the fork point (bytes, modes, links)", async () => {
    await fc.assert(
      fc.asyncProperty(treeArb, async (tree) => {
        const s = await start(tree)
        try {
          expect(snapshot(s.into)).toEqual(snapshot(s.root))
          const point = await captureTurn(s.rewind, s.child, "child")
          expect(point.manifestHash).toBe(s.point.manifestHash)
        } finally {
          await s.rewind.close()
        }
      }),
      { numRuns: 6, seed: 28 },
    )
  })

  it("a merge of disjoint changes equals applying both sides; a parent untouched by the child until then", async () => {
    const edits = fc.record({
      childOnly: fc.integer({ min: 0, max: 3 }),
      parentOnly: fc.integer({ min: 0, max: 3 }),
      shared: fc.integer({ min: 1, max: 3 }),
      deleteInChild: fc.boolean(),
    })
    await fc.assert(
      fc.asyncProperty(edits, async (e) => {
        const tree = new Map<string, Entry>()
        const enc = (t: string) => new TextEncoder().encode(t)
        for (let i = 0; i < e.shared; i++)
          tree.set(`shared${i}.txt`, { kind: "file", content: enc(lines(12, "l")), mode: 0o644 })
        tree.set("gone.txt", { kind: "file", content: enc("bye\n"), mode: 0o644 })
        const s = await start(tree)
        try {
          const expected = snapshot(s.root)
          const parentBefore = snapshot(s.root)
          // Child: line 1 of each shared file, new files, maybe a deletion. Parent: line 10, other new files.
          for (let i = 0; i < e.shared; i++) {
            const base = lines(12, "l")
            writeFileSync(join(s.into, `shared${i}.txt`), base.replace("l1\n", "child\n"))
          }
          for (let i = 0; i < e.childOnly; i++) writeFileSync(join(s.into, `c${i}.txt`), `c${i}\n`)
          if (e.deleteInChild) rmSync(join(s.into, "gone.txt"))
          await captureTurn(s.rewind, s.child, "child work")
          expect(snapshot(s.root)).toEqual(parentBefore)
          for (let i = 0; i < e.shared; i++) {
            writeFileSync(join(s.root, `shared${i}.txt`), lines(12, "l").replace("l10\n", "parent\n"))
          }
          for (let i = 0; i < e.parentOnly; i++) writeFileSync(join(s.root, `p${i}.txt`), `p${i}\n`)
          const preview = okValue(await s.rewind.previewMerge(s.parent, s.child))
          expect(preview.conflicts).toEqual([])
          okValue(await s.rewind.applyMerge(s.parent, preview.mergePointId!, preview.restore!.token!))
          // Both sides applied, as by hand.
          const mode = "file:644:"
          for (let i = 0; i < e.shared; i++) {
            expected.set(
              `shared${i}.txt`,
              mode +
                Buffer.from(lines(12, "l").replace("l1\n", "child\n").replace("l10\n", "parent\n")).toString(
                  "base64",
                ),
            )
          }
          for (let i = 0; i < e.childOnly; i++)
            expected.set(`c${i}.txt`, mode + Buffer.from(`c${i}\n`).toString("base64"))
          for (let i = 0; i < e.parentOnly; i++)
            expected.set(`p${i}.txt`, mode + Buffer.from(`p${i}\n`).toString("base64"))
          if (e.deleteInChild) expected.delete("gone.txt")
          expect(snapshot(s.root)).toEqual(expected)
        } finally {
          await s.rewind.close()
        }
      }),
      { numRuns: 5, seed: 280 },
    )
  })

  it("a merge never overwrites a file both sides changed in conflict", async () => {
    const conflictArb = fc.record({
      texts: fc.integer({ min: 1, max: 3 }),
      binary: fc.boolean(),
      markers: fc.boolean(),
    })
    await fc.assert(
      fc.asyncProperty(conflictArb, async (c) => {
        const tree = new Map<string, Entry>()
        for (let i = 0; i < c.texts; i++)
          tree.set(`t${i}.txt`, { kind: "file", content: new TextEncoder().encode("same\n"), mode: 0o644 })
        tree.set("img.bin", { kind: "file", content: new Uint8Array([0, 1, 2]), mode: 0o644 })
        tree.set("clean.txt", { kind: "file", content: new TextEncoder().encode("x\n"), mode: 0o644 })
        const s = await start(tree)
        try {
          for (let i = 0; i < c.texts; i++) {
            writeFileSync(join(s.into, `t${i}.txt`), "child\n")
            writeFileSync(join(s.root, `t${i}.txt`), "parent\n")
          }
          if (c.binary) {
            writeFileSync(join(s.into, "img.bin"), new Uint8Array([0, 9]))
            writeFileSync(join(s.root, "img.bin"), new Uint8Array([0, 8]))
          }
          writeFileSync(join(s.into, "clean.txt"), "from child\n")
          const preview = okValue(await s.rewind.previewMerge(s.parent, s.child, { markers: c.markers }))
          expect(preview.conflicts.length).toBe(c.texts + (c.binary ? 1 : 0))
          if (preview.canApply)
            okValue(await s.rewind.applyMerge(s.parent, preview.mergePointId!, preview.restore!.token!))
          for (let i = 0; i < c.texts; i++) {
            const now = readFileSync(join(s.root, `t${i}.txt`), "utf8")
            if (c.markers) expect(now).toContain("<<<<<<<")
            else expect(now).toBe("parent\n")
          }
          if (c.binary) expect([...readFileSync(join(s.root, "img.bin"))]).toEqual([0, 8])
          expect(readFileSync(join(s.root, "clean.txt"), "utf8")).toBe("from child\n")
        } finally {
          await s.rewind.close()
        }
      }),
      { numRuns: 5, seed: 2800 },
    )
  })

  it("the parent's tree is untouched by anything done in an isolated child", async () => {
    await fc.assert(
      fc.asyncProperty(
        treeArb,
        fc.array(fc.tuple(pathArb, fileArb), { maxLength: 4 }),
        async (tree, writes) => {
          const s = await start(tree)
          try {
            const before = snapshot(s.root)
            const base = await captureTurn(s.rewind, s.child, "base")
            for (const [path, f] of writes) {
              const full = join(s.into, path)
              try {
                mkdirSync(dirname(full), { recursive: true })
                writeFileSync(full, f.content)
              } catch {
                // A path that clashes with a file or directory already there is skipped.
              }
            }
            await captureTurn(s.rewind, s.child, "edits")
            const preview = okValue(await s.rewind.previewPointRestore(s.child, base.pointId))
            if (preview.canApply) okValue(await s.rewind.restorePoint(s.child, base.pointId, preview.token!))
            await s.rewind.redo(s.child)
            expect(snapshot(s.root)).toEqual(before)
          } finally {
            await s.rewind.close()
          }
        },
      ),
      { numRuns: 6, seed: 28000 },
    )
  })
})
