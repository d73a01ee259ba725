/**
 * The entry of the capture bundle (dist/cli/chunks/captureBundle.cjs, scripts/bundleCli.mjs): what
 * captureCached.ts takes from it. `nativeStatus` is there for the built-bin test only
 * (test/cli.codeCache.e2e.test.ts): bundled, the fs adapter's native module is found from another
 * file than in the ESM chunks, and the test checks the scanner the bundle captures with is the
 * native one. The doctor module it comes from is in the bundle anyway (storeAccess.ts loads it).
 */
export { nativeStatus } from "../internal/doctor.js"
export { captureFast } from "./captureFast.js"
