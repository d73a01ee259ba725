/**
 * @rewind/langgraph: a LangGraph checkpointer (`BaseCheckpointSaver`) on Rewind's stores. See
 * docs/langgraph.md.
 */
export * from "./errors.js"
export * from "./open.js"
export {
  RewindCheckpointSaver,
  type SaverOptions,
  type SaverRuntime,
  type SaverServices,
} from "./RewindCheckpointSaver.js"
