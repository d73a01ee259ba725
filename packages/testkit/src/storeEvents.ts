/**
 * Small builders of valid session events for store-level tests, where what matters is what a store
 * keeps (order, payload bytes, versions), not what a command would decide.
 */
import {
  Message,
  MessageAppended,
  type MessageId,
  Part,
  PartAppended,
  type PartId,
  Session,
  SessionCreated,
  type SessionId,
  type SessionKind,
  type TraceId,
  type TurnId,
  TurnStarted,
} from "@rewind/contracts"

export const sessionIdOf = (name: string) => name as SessionId

export const sessionCreated = (
  id: SessionId,
  fields: {
    readonly title?: string
    readonly kind?: SessionKind
    readonly parentId?: SessionId
    readonly at?: number
  } = {},
) =>
  new SessionCreated({
    session: new Session({
      id,
      rootTraceId: `trace-${id}` as TraceId,
      kind: fields.kind ?? "main",
      title: fields.title ?? `session ${id}`,
      cwd: "/work",
      createdAt: fields.at ?? 0,
      ...(fields.parentId === undefined ? {} : { parentId: fields.parentId }),
    }),
  })

/** A user message `m<n>` with its turn `t<n>`. */
export const userMessage = (sessionId: SessionId, n: number, at = 0) =>
  new MessageAppended({
    message: new Message({
      id: `m${n}` as MessageId,
      sessionId,
      turnId: `t${n}` as TurnId,
      role: "user",
      status: "ok",
      visibility: "all",
      createdAt: at,
    }),
  })

export const turnStarted = (n: number) =>
  new TurnStarted({ turnId: `t${n}` as TurnId, userMessageId: `m${n}` as MessageId })

/** A text part `p<n>` of message `m<messageN>`. */
export const textPart = (messageN: number, n: number, text: string) =>
  new PartAppended({
    part: new Part({ id: `p${n}` as PartId, messageId: `m${messageN}` as MessageId, kind: "text", text }),
  })
