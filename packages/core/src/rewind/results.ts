/**
 * The success Schemas of the `Rewind` operations: what `{ ok: true, value }` carries, declared as
 * Schemas so a host surface (the server, MCP, a schema dump) can encode and document every answer.
 * Where a program's result is only a TypeScript interface, its Schema is in one of the modules
 * re-exported here, one per capability; the door (`door.ts`) hands the program's value to a
 * signature typed by these Schemas, so the compiler checks that every value a program produces
 * fits the Schema declared for it.
 *
 * Invariants: nothing is `Schema.Unknown` except a message part's `data` and a refusal's `details`,
 * which are the host's own JSON; ids, hashes and paths use the branded Schemas of
 * `@rewind/contracts`; the encoded side of each is plain JSON (no Maps, no class instances needed).
 * A conversation rewind answers its cursor and the ids it cut, not the folded session state the
 * program works with (a host reads the conversation through `transcript`).
 */
export * from "./fileResults.js"

export * from "./forkResults.js"

export * from "./pointResults.js"

export * from "./sessionResults.js"
