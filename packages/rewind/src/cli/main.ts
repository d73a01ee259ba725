#!/usr/bin/env node
/** The `rewind` executable's full CLI as ES modules: what the bin loads when its bundle cannot be used (cliCached.ts). */
import { fullCli } from "./cliBundle.js"

fullCli(process.argv).then((code) => {
  process.exitCode = code
})
