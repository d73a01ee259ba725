/**
 * @rewind/core: the domain. Pure projections (evolve, active branch, evaluation) and Effect
 * programs over ports; no filesystem, SQL or adapter imports. Grouped by capability, each folder's
 * `index.ts` is its public module; the map is in docs/architecture.md.
 */
export * from "./conversation/index.js"
export * from "./files/index.js"
export * from "./fork/index.js"
export * from "./ports/index.js"
export * from "./restore/index.js"
export * from "./session/index.js"
export * from "./snapshot/index.js"
export * from "./workspace/index.js"
