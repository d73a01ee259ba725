// The copy-on-write path of materialisation, on a filesystem that can clone (XFS with reflink=1,
// btrfs): opt-in, since CI machines (ext4, tmpfs) cannot. Set REWIND_REFLINK_DIR to a writable
// directory on such a filesystem, e.g. a loop-mounted XFS:
//   truncate -s 600M /tmp/img && mkfs.xfs -m reflink=1 /tmp/img && mount -o loop /tmp/img /mnt/x
//   REWIND_REFLINK_DIR=/mnt/x npx vitest run test/isolatedForks.reflink.test.ts
// Every file the parent's capture vouches for (mtimes set outside the racy window) is cloned, not
// written; each clone is its own inode (never a hard link) and a write through it leaves the
// parent's file as it was.
import { lstatSync, mkdirSync, mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { openRewind } from "../src/index.js"
import { completedTurn, snapshot } from "./isolatedForkKit.js"
import { okValue } from "./okValue.js"

const DIR = process.env.REWIND_REFLINK_DIR

describe.skipIf(DIR === undefined)("materialising on a reflink filesystem (REWIND_REFLINK_DIR)", () => {
  it("clones every vouched file (cloned = files, written = 0), never a hard link", async () => {
    const box = mkdtempSync(join(DIR!, "rewind-reflink-"))
    try {
      const root = join(box, "parent")
      const paths: Array<string> = []
      for (let i = 0; i < 30; i++) {
        const path = join(`d${i % 3}`, `f${i}.txt`)
        mkdirSync(join(root, `d${i % 3}`), { recursive: true })
        writeFileSync(join(root, path), `content ${i}\n`.repeat(100 * (i + 1)))
        paths.push(path)
      }
      // Outside the capture's racy window, so its stat cache vouches for every file.
      const hourAgo = new Date(Date.now() - 3_600_000)
      for (const path of paths) utimesSync(join(root, path), hourAgo, hourAgo)
      const into = join(box, "tree")
      const rewind = await openRewind({ workspaceRoot: root, dir: join(box, "store"), durability: "atomic" })
      try {
        const session = okValue(await rewind.createSession({ title: "p", cwd: root }))
        const reply = await completedTurn(rewind, session.id, "go")
        const fork = okValue(
          await rewind.forkAtMessage(session.id, reply, undefined, { mode: "isolated", root: into }),
        )
        console.log(
          `[reflink] ${DIR}: ${JSON.stringify({ cloned: fork.isolated?.cloned, written: fork.isolated?.written })}`,
        )
        expect(fork.isolated).toMatchObject({ files: paths.length, cloned: paths.length, written: 0 })
        expect(snapshot(into)).toEqual(snapshot(root))
        for (const path of paths) {
          const clone = lstatSync(join(into, path))
          expect(clone.nlink).toBe(1)
          expect(clone.ino).not.toBe(lstatSync(join(root, path)).ino)
        }
        const original = readFileSync(join(root, paths[0]!), "utf8")
        writeFileSync(join(into, paths[0]!), "written through the clone\n")
        expect(readFileSync(join(root, paths[0]!), "utf8")).toBe(original)
      } finally {
        await rewind.close()
      }
    } finally {
      rmSync(box, { recursive: true, force: true })
    }
  })
})
