#!/usr/bin/env node
/** The `rewind` executable. */
import { runCli } from "./app.js"

runCli(process.argv).then((code) => {
  process.exitCode = code
})
