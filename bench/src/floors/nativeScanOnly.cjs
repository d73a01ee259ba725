// The native scanner alone over a tree, in a fresh process: what the `shape-floor` case times as
// the least a Node command that lists a workspace this way can do (see floors.bench.ts). It calls
// the fs adapter's built module as a capture's scan does (a queue of directories, breadth first,
// listed 256 at a time like core's SCAN_WAVE, relative to the root and opened beneath it; the
// adapter's thread count) and builds nothing from the answers but the queue.
// Usage: node nativeScanOnly.cjs <dirscan.node> <root>
const { availableParallelism } = require("node:os")
const [modulePath, root] = process.argv.slice(2)
const scanner = require(modulePath)
if (typeof scanner.scanBeneath !== "function")
  throw new Error("this dirscan build has no scanBeneath (not Linux?)")
const threads = Math.max(1, Math.min(4, availableParallelism()))
const DIRECTORY = 1
const WAVE = 256
const queue = [""]
let entries = 0
for (let at = 0; at < queue.length; ) {
  const wave = queue.slice(at, at + WAVE)
  at += wave.length
  const answers = scanner.scanBeneath(root, wave, wave.length >= 16 ? threads : 1)
  if (answers === null) throw new Error(`cannot open ${root}`)
  answers.forEach((listing, i) => {
    if (listing === true || listing.errno !== undefined) return
    const base = wave[i]
    for (let j = 0; j < listing.names.length; j++) {
      entries++
      const name = listing.names[j]
      if (listing.numbers[3 * j] === DIRECTORY && typeof name === "string" && name !== ".git")
        queue.push(base === "" ? name : `${base}/${name}`)
    }
  })
}
process.stdout.write(`${entries}\n`)
