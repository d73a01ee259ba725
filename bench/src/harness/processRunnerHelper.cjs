// The process runner's helper (see processRunner.ts), plain CommonJS so that it starts without the
// case process's loader. `runRequest` runs one process to its end, timed from its spawn call to its
// exit; the case process also uses it when it has no helper. Run as a script, it reads requests
// (JSON lines) from the FIFO named first until the case process closes it, and answers each on one
// line of the FIFO named second.
const fs = require("node:fs")
const { spawnSync } = require("node:child_process")
const { performance } = require("node:perf_hooks")

const runRequest = (request) => {
  const started = performance.now()
  const result = spawnSync(request.file, request.args, {
    cwd: request.cwd,
    env: request.env,
    encoding: "utf8",
    maxBuffer: request.maxBuffer,
    stdio: ["ignore", "pipe", "pipe"],
  })
  const reply = {
    ms: performance.now() - started,
    status: result.status,
    stdout: result.stdout ?? "",
    stderr: result.stderr ?? "",
  }
  if (result.error !== undefined) reply.error = String(result.error)
  return reply
}

const serve = (requests, replies) => {
  const input = fs.openSync(requests, "r")
  const output = fs.openSync(replies, "w")
  const chunk = Buffer.alloc(65536)
  let pending = Buffer.alloc(0)
  for (;;) {
    const read = fs.readSync(input, chunk, 0, chunk.length, null)
    if (read === 0) return
    pending = Buffer.concat([pending, chunk.subarray(0, read)])
    for (let newline = pending.indexOf(10); newline !== -1; newline = pending.indexOf(10)) {
      const request = JSON.parse(pending.toString("utf8", 0, newline))
      pending = pending.subarray(newline + 1)
      const text = Buffer.from(`${JSON.stringify(runRequest(request))}\n`)
      for (let at = 0; at < text.length; ) at += fs.writeSync(output, text, at)
    }
  }
}

if (require.main === module) serve(process.argv[2], process.argv[3])

module.exports = { runRequest }
