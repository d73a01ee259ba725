// Builders for hand-written event streams, so pure functions can be tested without a store.
import {
  Checkpoint,
  CheckpointCreated,
  CompactionApplied,
  ConversationRewound,
  Message,
  MessageAppended,
  type MessageId,
  type RevertCursor,
  type Role,
  Session,
  SessionCreated,
  type SessionEvent,
  type SessionId,
  type StoredEvent,
  type TraceId,
  type TurnId,
  TurnStarted,
} from "@rewind/contracts"
import { Schema } from "effect"

export const sid = "ses_1" as SessionId
export const mid = (n: number | string) => `m${n}` as MessageId
export const tid = (n: number | string) => `t${n}` as TurnId

export class StreamBuilder {
  readonly events: Array<SessionEvent> = [
    new SessionCreated({
      session: new Session({
        id: sid,
        rootTraceId: "tr" as TraceId,
        kind: "main",
        title: "t",
        cwd: "/w",
        createdAt: 0,
      }),
    }),
  ]
  private messages: Array<MessageId> = []

  message(id: MessageId, role: Role, turn: TurnId): this {
    this.events.push(
      new MessageAppended({
        message: new Message({
          id,
          sessionId: sid,
          turnId: turn,
          role,
          status: "ok",
          visibility: role === "summary" ? "model_only" : "all",
          createdAt: 0,
        }),
      }),
    )
    if (role === "user") this.events.push(new TurnStarted({ turnId: turn, userMessageId: id }))
    this.messages.push(id)
    return this
  }

  /** Appends user/assistant pairs: turn n has user m<2n-1>… as named by the caller. */
  turn(n: number): this {
    return this.message(mid(`u${n}`), "user", tid(n)).message(mid(`a${n}`), "assistant", tid(n))
  }

  rewind(cursor: RevertCursor, requested: MessageId = cursor.targetMessageId): this {
    this.events.push(new ConversationRewound({ cursor, requestedMessageId: requested }))
    return this
  }

  compaction(summary: MessageId, from: MessageId, to: MessageId, turn: TurnId): this {
    this.message(summary, "summary", turn)
    this.events.push(
      new CompactionApplied({ summaryMessageId: summary, fromMessageId: from, toMessageId: to }),
    )
    return this
  }

  checkpoint(id: string, anchor: MessageId, turn: TurnId): this {
    this.events.push(
      new CheckpointCreated({
        checkpoint: Schema.decodeUnknownSync(Checkpoint)({
          checkpointId: id,
          turnId: turn,
          anchorMessageId: anchor,
          toolName: "Write",
          path: "src/a.ts",
          before: { _tag: "absent" },
          after: { _tag: "present", hash: "0".repeat(64) },
          linesAdded: 1,
          linesRemoved: 0,
        }),
      }),
    )
    return this
  }

  stored(): Array<StoredEvent> {
    return this.events.map((event, i) => ({ sessionId: sid, sequence: i + 1, at: i, event }))
  }

  lastMessage(): MessageId {
    return this.messages.at(-1)!
  }
}
