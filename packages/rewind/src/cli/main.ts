#!/usr/bin/env node
/** The `rewind` executable. */
import { runCli } from "./app.js"
import { endQuietlyOnBrokenPipe } from "./cliExit.js"

endQuietlyOnBrokenPipe()

runCli(process.argv).then((code) => {
  process.exitCode = code
})
