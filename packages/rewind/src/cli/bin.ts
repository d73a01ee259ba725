#!/usr/bin/env node
/**
 * The `rewind` bin (bundled to dist/cli/rewind.mjs with code splitting): it looks at the command
 * before loading anything, so what runs on every agent hook and the cheapest commands do not pay
 * for the whole CLI. `hook <agent>` goes to the hook client (hooks/hookClient.ts: Node built-ins
 * only); a lone `--version` is answered here; everything else (and a `hook` with arguments the
 * client does not take, such as `--help`) loads the full CLI (main.ts), whose commands load their
 * own heavy parts on first use. `capture --json` is handed to the workspace's running server when
 * one answers (cli/captureClient.ts: Node built-ins only); else a `capture` with plain arguments
 * runs without the option parser (cli/captureFast.ts), loaded from its own bundle with a V8 code
 * cache (cli/captureCached.ts), and any other loads the full CLI. The full CLI, too, is loaded
 * from its own bundle with a V8 code cache when it can be (cli/cliCached.ts), else from the
 * chunks (main.ts).
 */
import { fileURLToPath } from "node:url"

const argv = process.argv
const fullCli = () =>
  import("./cliCached.js").then((m) => m.runFullCli(fileURLToPath(new URL(m.CLI_BUNDLE, import.meta.url))))
if (argv[2] === "--version" && argv.length === 3) {
  const { VERSION } = await import("./version.js")
  process.stdout.write(`${VERSION}\n`)
} else if (argv[2] === "capture") {
  // `capture --json` goes to the workspace's running server when one answers (captureClient.ts);
  // else a capture with plain arguments runs here without the option parser (captureFast.ts, from
  // the capture bundle beside this file: captureCached.ts).
  const code =
    (await import("./captureClient.js").then((m) => m.captureThroughServer(argv.slice(3)))) ??
    (await import("./captureCached.js").then((m) =>
      m.captureCached(argv.slice(3), fileURLToPath(new URL(m.CAPTURE_BUNDLE, import.meta.url))),
    ))
  if (code === undefined) await fullCli()
  else process.exitCode = code
} else if (argv[2] !== "hook" || !(await import("../hooks/hookClient.js").then((m) => m.hookMain(argv)))) {
  await fullCli()
}
