/**
 * rewind: the embeddable package. `openRewind` (the Promise facade with the embedded default
 * store), the layers it wires, and the slash-command parser and dispatcher.
 */

export * from "./dispatchSlashCommand.js"
export * from "./errors.js"
export * from "./layers.js"
export * from "./openRewind.js"
export * from "./pointDiff.js"
export * from "./slashCommand.js"
