/**
 * The docs' code examples are the files in examples/ (typechecked with the package): every
 * `<!-- example: path -->` block in docs/*.md must be the file's exact content. Importing the
 * certification example also runs it (it registers the ArtifactStore conformance suite).
 */
import { readdirSync, readFileSync } from "node:fs"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "@effect/vitest"
import "../examples/certify-artifact-store.js"

const repo = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "..")
const docs = join(repo, "docs")
const MARKER = /<!-- example: (\S+) -->\n```ts\n([\s\S]*?)```\n/g

describe("docs examples", () => {
  const found: Array<{ doc: string; path: string; body: string }> = []
  for (const doc of readdirSync(docs).filter((f) => f.endsWith(".md"))) {
    for (const m of readFileSync(join(docs, doc), "utf8").matchAll(MARKER)) {
      found.push({ doc, path: m[1]!, body: m[2]! })
    }
  }

  it("embedding.md and storage.md include their examples", () => {
    expect(found.map((f) => `${f.doc}:${f.path}`).sort()).toEqual([
      "embedding.md:packages/rewind/examples/embedding-effect.ts",
      "embedding.md:packages/rewind/examples/embedding-promise.ts",
      "embedding.md:packages/rewind/examples/snapshots-promise.ts",
      "storage.md:packages/rewind/examples/certify-artifact-store.ts",
    ])
  })

  it.each(found)("$doc: $path matches the compiled file", ({ path, body }) => {
    expect(body).toBe(readFileSync(join(repo, path), "utf8"))
  })
})
