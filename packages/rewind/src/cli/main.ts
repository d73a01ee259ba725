#!/usr/bin/env node
/** The `rewind` executable. */
import { runCli } from "./app.js"

// A reader that stops early (`rewind points --json | head -1`) is not an error of ours.
for (const stream of [process.stdout, process.stderr]) {
  stream.on("error", (error: NodeJS.ErrnoException) => {
    if (error.code === "EPIPE") process.exit(process.exitCode ?? 0)
    throw error
  })
}

runCli(process.argv).then((code) => {
  process.exitCode = code
})
