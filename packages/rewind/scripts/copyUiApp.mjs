// Copies the built browser app (@rewind/ui-app's dist/, built first by turbo: it is a dependency)
// into dist/ui/app/, where `rewind ui` serves it from: the assets ship inside this package and
// nothing is built at run time. A missing build fails this build rather than shipping without it.
import { cpSync, existsSync, rmSync } from "node:fs"
import { createRequire } from "node:module"
import { dirname, join } from "node:path"

const require = createRequire(import.meta.url)
const source = join(dirname(require.resolve("@rewind/ui-app/package.json")), "dist")
if (!existsSync(join(source, "index.html"))) {
  console.error(`copyUiApp: ${source}/index.html is missing: build @rewind/ui-app first (turbo run build)`)
  process.exit(1)
}
rmSync("dist/ui/app", { recursive: true, force: true })
cpSync(source, "dist/ui/app", { recursive: true })
