/**
 * The scalar Schemas the result modules share: a count (a non-negative integer) and a content hash
 * or `null` (no file there). Internal to `rewind/`: not part of `RewindResults`.
 */
import { ContentHash } from "@rewind/contracts"
import { Schema } from "effect"

export const Count = Schema.Number.pipe(Schema.int(), Schema.nonNegative())
export const HashOrNull = Schema.NullOr(ContentHash)
