/**
 * The server's schema document (`openRpcDocument`, OpenRPC 1.3): every method of an operation
 * table with its params and result as JSON Schemas derived from the operations' Schemas. Parts
 * JSON cannot carry (a declared function such as `onProgress`, an AbortSignal) are left out
 * rather than described wrongly.
 */
import { JSONSchema, Option, Schema, type SchemaAST } from "effect"
import type { OperationTable } from "./rpcCalls.js"

/** A JSON Schema of what a host sends for `schema`; parts JSON cannot carry (functions) are left out. */
const jsonSchemaOf = (schema: Schema.Schema.Any): object => {
  const attempt = (s: Schema.Schema.Any): Option.Option<object> => {
    try {
      return Option.some(
        JSONSchema.make(Schema.encodedBoundSchema(s as Schema.Schema.AnyNoContext)) as object,
      )
    } catch {
      return Option.none()
    }
  }
  const direct = attempt(schema)
  if (Option.isSome(direct)) return direct.value
  const pruned = prune(schema.ast)
  if (pruned !== undefined) {
    const again = attempt(Schema.make(pruned))
    if (Option.isSome(again)) return again.value
  }
  return { description: "not expressible as JSON Schema; see docs/server.md" }
}

/** The AST without members and properties JSON cannot express (a declared function or AbortSignal). */
const prune = (ast: SchemaAST.AST): SchemaAST.AST | undefined => {
  const expressible = (node: SchemaAST.AST) => {
    try {
      JSONSchema.make(Schema.encodedBoundSchema(Schema.make(node)))
      return true
    } catch {
      return false
    }
  }
  switch (ast._tag) {
    case "Union": {
      const members = ast.types
        .filter((t) => t._tag !== "UndefinedKeyword")
        .map((t) => prune(t) ?? t)
        .filter(expressible)
      if (members.length === 0) return undefined
      return members.length === 1 ? members[0] : Schema.Union(...members.map((m) => Schema.make(m))).ast
    }
    case "TypeLiteral": {
      const kept = ast.propertySignatures.filter((p) => expressible(p.type) || prune(p.type) !== undefined)
      return new (ast.constructor as typeof SchemaAST.TypeLiteral)(
        kept.map((p) => {
          const inner = expressible(p.type) ? p.type : prune(p.type)!
          return new (p.constructor as typeof SchemaAST.PropertySignature)(
            p.name,
            inner,
            p.isOptional,
            p.isReadonly,
            p.annotations,
          )
        }),
        ast.indexSignatures,
        ast.annotations,
      )
    }
    case "Refinement":
    case "Transformation":
      return undefined
    default:
      return undefined
  }
}

const OutcomeRefusal = {
  type: "object",
  required: ["ok", "refusal"],
  properties: {
    ok: { const: false },
    refusal: {
      type: "object",
      required: ["kind", "message"],
      properties: { kind: { type: "string" }, message: { type: "string" }, details: {} },
    },
  },
}

/** An OpenRPC 1.3 document of every method, derived from the operations' Schemas. */
export const openRpcDocument = (operations: OperationTable, version: string) => ({
  openrpc: "1.3.2",
  info: {
    title: "rewind serve",
    version,
    description:
      "JSON-RPC 2.0, one message per line. A result is an Outcome: { ok: true, value } or { ok: false, refusal }. See docs/server.md.",
  },
  methods: Object.values(operations).map((op) => ({
    name: op.name,
    summary: op.summary,
    paramStructure: "either",
    params: op.args.map((arg) => ({
      name: arg.name,
      required: arg.optional !== true,
      schema: jsonSchemaOf(arg.schema),
    })),
    result: {
      name: "outcome",
      schema: {
        oneOf: [
          {
            type: "object",
            required: ["ok", "value"],
            properties: { ok: { const: true }, value: jsonSchemaOf(op.success) },
          },
          OutcomeRefusal,
        ],
      },
    },
    "x-access": op.access,
    ...(op.session === undefined ? {} : { "x-session": op.session }),
    ...(op.progress === true ? { "x-progress": true } : {}),
  })),
})
