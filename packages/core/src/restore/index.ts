/**
 * The durable write engine every restore shares: planned file versions, journaled writes, the file-
 * rewind journal, preview tokens, restore records, redo and recovery.
 */
export * from "./durableRestore.js"
export * from "./fileRewindJournal.js"
export * from "./journaledWrites.js"
export * from "./previewTokens.js"
export * from "./recover.js"
export * from "./redo.js"
