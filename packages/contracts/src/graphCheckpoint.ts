/**
 * Events of a graph thread: the checkpoints an agent framework's checkpointer (LangGraph's
 * `BaseCheckpointSaver`, in `@rewind/langgraph`) keeps in a Rewind session stream, one stream per
 * thread, every checkpoint namespace (subgraph) of the thread in the same stream.
 *
 * The values themselves are opaque bytes made by the framework's serializer: each is kept as its
 * serializer type tag and either the bytes inline (base64, small values) or the content address of
 * a blob in the artifact store. A channel value is recorded once, by the checkpoint that introduced
 * its (channel, version); later checkpoints refer to it through their channel versions.
 *
 * Append-only: `GraphThreadDeleted` does not remove anything; everything recorded before it in the
 * stream stops being part of the thread (so its blobs stop being GC roots).
 */
import { Schema } from "effect"
import { ContentHash } from "./ids.js"

/** A serialized value: the serializer's type tag, and its bytes inline (base64) or as a blob. */
export const GraphValue = Schema.Union(
  Schema.Struct({ type: Schema.String, inline: Schema.String }),
  Schema.Struct({ type: Schema.String, hash: ContentHash }),
)
export type GraphValue = typeof GraphValue.Type

/** A channel version as the framework hands it: a number or a string. */
export const GraphChannelVersion = Schema.Union(Schema.Number, Schema.String)
export type GraphChannelVersion = typeof GraphChannelVersion.Type

export class GraphCheckpointRecorded extends Schema.TaggedClass<GraphCheckpointRecorded>()(
  "GraphCheckpointRecorded",
  {
    /** The framework's thread id, as given (the stream id is derived from it). */
    threadId: Schema.String,
    namespace: Schema.String,
    checkpointId: Schema.String,
    parentCheckpointId: Schema.optional(Schema.String),
    /** The checkpoint without its channel values. */
    checkpoint: GraphValue,
    metadata: GraphValue,
    /**
     * The (channel, version) pairs this checkpoint introduced, with their value; no value when the
     * channel was empty at that version.
     */
    channels: Schema.Array(
      Schema.Struct({
        channel: Schema.String,
        version: GraphChannelVersion,
        value: Schema.optional(GraphValue),
      }),
    ),
  },
) {}

/** Pending writes of one task against one checkpoint, with the index each write is kept under. */
export class GraphWritesRecorded extends Schema.TaggedClass<GraphWritesRecorded>()("GraphWritesRecorded", {
  namespace: Schema.String,
  checkpointId: Schema.String,
  taskId: Schema.String,
  taskPath: Schema.String,
  writes: Schema.Array(
    Schema.Struct({
      idx: Schema.Number.pipe(Schema.int()),
      channel: Schema.String,
      value: GraphValue,
    }),
  ),
}) {}

/** The thread was deleted: what the stream recorded before this no longer belongs to it. */
export class GraphThreadDeleted extends Schema.TaggedClass<GraphThreadDeleted>()("GraphThreadDeleted", {
  threadId: Schema.String,
}) {}

/** The blobs a graph event refers to (GC roots while the thread has not been deleted since). */
export const graphEventBlobs = (
  event: GraphCheckpointRecorded | GraphWritesRecorded,
): ReadonlyArray<ContentHash> => {
  const out: Array<ContentHash> = []
  const add = (value: GraphValue | undefined) => {
    if (value !== undefined && "hash" in value) out.push(value.hash)
  }
  if (event._tag === "GraphCheckpointRecorded") {
    add(event.checkpoint)
    add(event.metadata)
    for (const c of event.channels) add(c.value)
  } else for (const w of event.writes) add(w.value)
  return out
}
