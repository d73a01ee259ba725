/**
 * Compiles a schema's AST into a plain predicate that says whether a freshly parsed JSON value
 * already IS the decoded value: it matches the schema and decoding would change nothing (no
 * transformation, no property to strip). Cold loads use it to accept stored payloads in place
 * instead of copying every object through the schema interpreter.
 *
 * It is deliberately partial. Any construct it does not model exactly (transformations, classes,
 * suspensions, unions whose members could both accept one object, …) makes `compilePayloadCheck`
 * return `undefined`, and a `false` answer only means "take the slow path": callers then decode
 * with the schema itself, which is also what produces the error message. So the predicate may be
 * stricter than the schema, never looser (a differential property test holds it to that).
 */
import { Option, type SchemaAST } from "effect"

export type PayloadCheck = (input: unknown) => boolean

class Unsupported extends Error {}

const unsupported = (ast: SchemaAST.AST): never => {
  throw new Unsupported(ast._tag)
}

/** An AST that can only ever accept objects or arrays (so two of them in one union could overlap). */
const isStructured = (ast: SchemaAST.AST): boolean => {
  switch (ast._tag) {
    case "TypeLiteral":
    case "TupleType":
      return true
    case "Refinement":
      return isStructured(ast.from)
    default:
      return false
  }
}

const compile = (ast: SchemaAST.AST): PayloadCheck => {
  switch (ast._tag) {
    case "StringKeyword":
      return (u) => typeof u === "string"
    case "NumberKeyword":
      return (u) => typeof u === "number"
    case "BooleanKeyword":
      return (u) => typeof u === "boolean"
    case "UnknownKeyword":
    case "AnyKeyword":
      return () => true
    case "UndefinedKeyword":
      return (u) => u === undefined
    case "Literal": {
      const literal = ast.literal
      return (u) => u === literal
    }
    case "Refinement": {
      const from = compile(ast.from)
      const refinement = ast
      return (u) => from(u) && Option.isNone(refinement.filter(u, {}, refinement))
    }
    case "Union": {
      if (ast.types.filter(isStructured).length > 1) return unsupported(ast)
      const members = ast.types.map(compile)
      return (u) => {
        for (const member of members) if (member(u)) return true
        return false
      }
    }
    case "TupleType": {
      if (ast.rest.length > 1 || ast.elements.some((e) => e.isOptional)) return unsupported(ast)
      const elements = ast.elements.map((e) => compile(e.type))
      const rest = ast.rest.length === 1 ? compile(ast.rest[0]!.type) : undefined
      return (u) => {
        if (!Array.isArray(u) || u.length < elements.length) return false
        if (rest === undefined && u.length > elements.length) return false
        for (let i = 0; i < elements.length; i++) if (!elements[i]!(u[i])) return false
        if (rest !== undefined) for (let i = elements.length; i < u.length; i++) if (!rest(u[i])) return false
        return true
      }
    }
    case "TypeLiteral": {
      if (ast.indexSignatures.length > 0) {
        if (ast.propertySignatures.length > 0 || ast.indexSignatures.length > 1) return unsupported(ast)
        const signature = ast.indexSignatures[0]!
        if (signature.parameter._tag !== "StringKeyword") return unsupported(ast)
        const value = compile(signature.type)
        return (u) => {
          if (typeof u !== "object" || u === null || Array.isArray(u)) return false
          for (const key of Object.keys(u)) if (!value((u as Record<string, unknown>)[key])) return false
          return true
        }
      }
      const properties = ast.propertySignatures.map((signature) => {
        if (typeof signature.name !== "string") return unsupported(ast)
        return { name: signature.name, optional: signature.isOptional, check: compile(signature.type) }
      })
      return (u) => {
        if (typeof u !== "object" || u === null || Array.isArray(u)) return false
        const record = u as Record<string, unknown>
        let present = 0
        for (const property of properties) {
          if (Object.hasOwn(record, property.name)) {
            present++
            if (!property.check(record[property.name])) return false
          } else if (!property.optional && !property.check(undefined)) {
            return false
          }
        }
        // A property the schema does not know would be stripped by decoding: not "already decoded".
        return Object.keys(record).length === present
      }
    }
    default:
      return unsupported(ast)
  }
}

/** The in-place check for `ast`, or `undefined` when the AST uses something it does not model. */
export const compilePayloadCheck = (ast: SchemaAST.AST): PayloadCheck | undefined => {
  try {
    return compile(ast)
  } catch (error) {
    if (error instanceof Unsupported) return undefined
    throw error
  }
}
