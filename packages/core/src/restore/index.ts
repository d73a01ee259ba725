/**
 * The durable write engine every restore shares: planned file versions, journaled writes, the file-
 * rewind journal, preview tokens, restore records, redo and recovery.
 */
export {
  type DurableRestoreInput,
  type DurableRestoreResult,
  runDurableRestore,
} from "./durableRestore.js"
export type { JournalEntry } from "./fileRewindJournal.js"
export type {
  ApplyJournaledOptions,
  JournaledWriteResult,
} from "./journaledWrites.js"
export {
  issuePreviewToken,
  PREVIEW_TOKEN_TTL_MS,
  redeemPreviewToken,
} from "./previewTokens.js"
export {
  type IncompleteOperation,
  type Resolution,
  recover,
  resolveOperation,
} from "./recover.js"
export {
  type RedoResult,
  redo,
} from "./redo.js"
