// The native scanner alone over a tree, in a fresh process: what the `shape-floor` case times as
// the least a Node command that lists a workspace can do (see floors.bench.ts). It calls the fs
// adapter's built module the way the adapter does (directories by waves, relative to the root,
// opened beneath it; the adapter's thread count) and builds nothing from the answers but the next
// wave. Usage: node nativeScanOnly.cjs <dirscan.node> <root>
const { availableParallelism } = require("node:os")
const [modulePath, root] = process.argv.slice(2)
const scanner = require(modulePath)
if (typeof scanner.scanBeneath !== "function")
  throw new Error("this dirscan build has no scanBeneath (not Linux?)")
const threads = Math.max(1, Math.min(4, availableParallelism()))
const DIRECTORY = 1
let wave = [""]
let entries = 0
while (wave.length > 0) {
  const answers = scanner.scanBeneath(root, wave, wave.length >= 16 ? threads : 1)
  if (answers === null) throw new Error(`cannot open ${root}`)
  const next = []
  answers.forEach((listing, i) => {
    if (listing === true || listing.errno !== undefined) return
    const base = wave[i]
    for (let j = 0; j < listing.names.length; j++) {
      entries++
      const name = listing.names[j]
      if (listing.numbers[3 * j] === DIRECTORY && typeof name === "string" && name !== ".git")
        next.push(base === "" ? name : `${base}/${name}`)
    }
  })
  wave = next
}
process.stdout.write(`${entries}\n`)
