// Stands in for `fast-check` in the bundled CLI (scripts/bundleCli.mjs). effect's Schema module
// imports it (through effect/FastCheck) only to build Arbitraries, which no code the CLI ships
// does (property tests run the sources, with the real fast-check). Bundled, it was 150 KB of
// source (with pure-rand) that every cold process parsed and evaluated. Anything that did reach
// for it would find no member (`fastCheck.array` is undefined) and throw a TypeError at that call:
// never a silently wrong result. test/cli.bundle.e2e.test.ts checks the bundle holds none of it.
module.exports = {}
