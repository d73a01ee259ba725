// The unchanged-manifest shortcut's encoding claim (snapshot/unchangedManifest.ts): the text it
// hashes, a row at a time, is byte for byte what `encodeManifest` writes for the manifest it stands
// for, whatever the paths (quotes, non-ASCII, astral characters) and link targets; so it finds a
// stored manifest of exactly that map, and nothing else (a changed entry, one more or one less).
import { describe, expect, it } from "@effect/vitest"
import type { ContentHash, FileStat, WorkspacePath } from "@rewind/contracts"
import { workspacePathProblem } from "@rewind/contracts"
import { Effect, FastCheck as fc, Layer } from "effect"
import { ArtifactStore, type ArtifactStoreService } from "../src/ports/ArtifactStore.js"
import { encodeManifest, type ManifestEntry } from "../src/snapshot/manifestCodec.js"
import type { StatCacheEntry } from "../src/snapshot/statCacheBinary.js"
import { matchBaseManifest } from "../src/snapshot/unchangedManifest.js"
import type { ScannedPath, ScanResult } from "../src/snapshot/workspaceScan.js"
import { hashContent } from "../src/workspace/contentHash.js"

const hash = fc.stringMatching(/^[0-9a-f]{64}$/).map((h) => h as ContentHash)
const segment = fc
  .oneof(
    fc.string({ minLength: 1, maxLength: 6 }),
    fc.string({ unit: "grapheme", minLength: 1, maxLength: 4 }),
  )
  .filter((s) => !s.includes("/"))
const path = fc
  .array(segment, { minLength: 1, maxLength: 3 })
  .map((s) => s.join("/"))
  .filter((p) => workspacePathProblem(p) === undefined)
  .map((p) => p as WorkspacePath)

interface Tree {
  readonly files: Map<WorkspacePath, StatCacheEntry>
  readonly links: Map<WorkspacePath, string>
}

const tree: fc.Arbitrary<Tree> = fc
  .uniqueArray(
    fc.tuple(
      path,
      fc.oneof(
        fc.record({ hash, mode: fc.constantFrom(0o644, 0o755), size: fc.nat(1 << 20) }),
        fc.string({ unit: "grapheme", maxLength: 8 }),
      ),
    ),
    { selector: ([p]) => p, maxLength: 30 },
  )
  .map((rows) => {
    const files = new Map<WorkspacePath, StatCacheEntry>()
    const links = new Map<WorkspacePath, string>()
    rows.forEach(([p, e], i) => {
      if (typeof e === "string") links.set(p, e)
      else files.set(p, { ...e, mtimeNs: BigInt(i), ctimeNs: BigInt(i), inode: BigInt(i + 1) })
    })
    return { files, links }
  })

const manifestOf = ({ files, links }: Tree) => {
  const m = new Map<WorkspacePath, ManifestEntry>()
  for (const [p, e] of files) m.set(p, { kind: "file", hash: e.hash, mode: e.mode, size: e.size })
  for (const [p, target] of links) m.set(p, { kind: "link", target })
  return m
}

/** The scan that found exactly this tree, every file as the stat cache remembers it. */
const scanOf = ({ files, links }: Tree): ScanResult => {
  const entries = new Map<WorkspacePath, ScannedPath>()
  for (const [p, e] of files) {
    const stat: FileStat = {
      kind: "file",
      size: e.size,
      mode: e.mode,
      mtimeNs: e.mtimeNs,
      ctimeNs: e.ctimeNs!,
      inode: e.inode,
    }
    entries.set(p, { stat })
  }
  for (const [p, target] of links) {
    const stat: FileStat = {
      kind: "symlink",
      size: target.length,
      mode: 0o777,
      mtimeNs: 0n,
      ctimeNs: 0n,
      inode: 0n,
    }
    entries.set(p, { stat, target })
  }
  return { entries } as unknown as ScanResult
}

/** An artifact store holding one manifest. */
const storeOf = (bytes: Uint8Array) =>
  Layer.succeed(ArtifactStore, {
    get: () => Effect.succeed(bytes),
  } as unknown as ArtifactStoreService)

const match = (t: Tree, stored: Map<WorkspacePath, ManifestEntry>) => {
  const bytes = encodeManifest(stored)
  return Effect.runSync(
    matchBaseManifest(scanOf(t), t.files, hashContent(bytes), Number.MAX_SAFE_INTEGER).pipe(
      Effect.provide(storeOf(bytes)),
    ),
  )
}

describe("matching an unchanged manifest", () => {
  it("finds the manifest encodeManifest writes for the scanned tree", () =>
    fc.assert(
      fc.property(tree, (t) => {
        const found = match(t, manifestOf(t))
        let bytes = 0
        for (const e of t.files.values()) bytes += e.size
        // With the manifest's bytes as read, for a caller that must decode it after all.
        const manifest = encodeManifest(manifestOf(t))
        expect(found).toEqual({ _tag: "Same", files: t.files.size, links: t.links.size, bytes, manifest })
      }),
      { numRuns: 300, seed: 20261205 },
    ))

  it("does not find a manifest that differs in any entry", () =>
    fc.assert(
      fc.property(
        tree.filter((t) => t.files.size + t.links.size > 0),
        fc.nat(),
        fc.constantFrom("mode", "size", "hash", "link", "extra", "tombstone"),
        (t, pick, how) => {
          const stored = manifestOf(t)
          const paths = [...stored.keys()]
          const at = paths[pick % paths.length]!
          const e = stored.get(at)!
          if (how === "extra") stored.set(`${at}.extra` as WorkspacePath, e)
          else if (how === "tombstone") stored.set(`${at}.gone` as WorkspacePath, { kind: "tombstone" })
          else if (e.kind !== "file" || how === "link")
            stored.set(at, { kind: "link", target: "elsewhere\u00e9" })
          else if (how === "mode") stored.set(at, { ...e, mode: e.mode ^ 1 })
          else if (how === "size") stored.set(at, { ...e, size: e.size + 1 })
          else stored.set(at, { ...e, hash: "0".repeat(64) as ContentHash })
          // (A changed link target that happens to be the same one is the same manifest.)
          const same = encodeManifest(stored).join() === encodeManifest(manifestOf(t)).join()
          expect(match(t, stored)._tag).toBe(same ? "Same" : "Differs")
        },
      ),
      { numRuns: 300, seed: 20261205 },
    ))
})
