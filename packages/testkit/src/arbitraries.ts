/**
 * Schema-derived arbitraries: random values of the contracts' own schemas, so property tests
 * explore exactly the shapes the codec and the stores must accept.
 */
import { MessageId, SessionEvent, SessionId, WorkspacePath } from "@rewind/contracts"
import { Arbitrary } from "effect"

export const arbSessionId = Arbitrary.make(SessionId)
export const arbMessageId = Arbitrary.make(MessageId)
export const arbWorkspacePath = Arbitrary.make(WorkspacePath)
export const arbSessionEvent = Arbitrary.make(SessionEvent)
