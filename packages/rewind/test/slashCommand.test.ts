import { describe, expect, it } from "@effect/vitest"
import { Either } from "effect"
import { parseSlashCommand } from "../src/slashCommand.js"

const ok = (input: string) => {
  const r = parseSlashCommand(input)
  if (Either.isLeft(r)) throw new Error(r.left.message)
  return r.right
}
const err = (input: string) => {
  const r = parseSlashCommand(input)
  if (Either.isRight(r)) throw new Error(`expected an error for ${input}, got ${JSON.stringify(r.right)}`)
  return r.left.message
}

describe("slash-command grammar", () => {
  it.each([
    ["/rewind", { _tag: "RewindStatus" }],
    ["/rewind status", { _tag: "RewindStatus" }],
    ["  /rewind   help ", { _tag: "RewindHelp" }],
    ["/rewind -h", { _tag: "RewindHelp" }],
    ["/rewind latest", { _tag: "RewindCheckpoint", checkpoint: "latest" }],
    ["/rewind cp_123", { _tag: "RewindCheckpoint", checkpoint: "cp_123" }],
    ["/rewind conversation m1", { _tag: "RewindConversation", messageId: "m1" }],
    ["/rewind message m1", { _tag: "RewindConversation", messageId: "m1" }],
    ["/rewind code m1", { _tag: "RewindCode", messageId: "m1" }],
    ["/rewind workspace m1", { _tag: "RewindCode", messageId: "m1" }],
    ["/rewind both m1", { _tag: "RewindBoth", messageId: "m1" }],
    ["/rewind cascade both m1", { _tag: "RewindCascade", scope: "both", messageId: "m1" }],
    ["/rewind cascade code m1", { _tag: "RewindCascade", scope: "workspace", messageId: "m1" }],
    ["/rewind cascade message m1", { _tag: "RewindCascade", scope: "conversation", messageId: "m1" }],
    ["/fork", { _tag: "Fork", checkpoint: undefined }],
    ["/fork latest", { _tag: "Fork", checkpoint: "latest" }],
    ["/fork cp_9", { _tag: "Fork", checkpoint: "cp_9" }],
    ["/side why is this slow?", { _tag: "SideChat", question: "why is this slow?" }],
    ["/btw  what does   this do", { _tag: "SideChat", question: "what does   this do" }],
  ])("parses %j", (input, expected) => {
    expect(ok(input)).toEqual(expected)
  })

  it.each([
    ["/rewind conversation", /needs a message id/],
    ["/rewind both ../etc", /not a valid message id/],
    ["/rewind cascade m1", /needs a scope/],
    ["/rewind cascade sideways m1", /needs a scope/],
    ["/rewind code m1 extra", /unexpected 'extra'/],
    ["/rewind status now", /unexpected 'now'/],
    ["/rewind ../../x", /neither a \/rewind subcommand nor a valid checkpoint id/],
    ["/fork a b", /at most one argument/],
    ["/fork ../x", /not a valid checkpoint id/],
    ["/side", /needs a question/],
    ["/undo", /not a Rewind command/],
    ["", /not a Rewind command/],
  ])("refuses %j with a helpful message", (input, pattern) => {
    const message = err(input)
    expect(message).toMatch(pattern)
    expect(message).toContain("/rewind cascade <scope> <msgId>")
  })
})
