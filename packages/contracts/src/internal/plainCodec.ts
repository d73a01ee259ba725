/**
 * A compiled checker for schemas whose encoded and decoded forms are the same plain JSON-like data
 * (structs, arrays, unions, literals, strings, numbers, booleans, `unknown`, and refinements such
 * as id patterns). Effect's generic parser interprets the schema's AST on every value; a stream of
 * tens of thousands of events (a fork bundle, a cold load) spends most of its time there. Compiling
 * the AST once into closures gives the same answer much faster.
 *
 * `compilePlain` returns undefined for any schema it cannot prove to be plain (a transformation, a
 * class declaration, a template literal...): callers then keep Effect's codec. The compiled
 * function answers the value with only the declared properties (what Effect's codec answers with
 * its default of ignoring excess properties), or `INVALID`; on `INVALID` callers run Effect's codec
 * to get its exact error message, so the fast path never changes what is accepted or said. The
 * input is never mutated: an object or array with nothing to strip is answered as it is (no copy,
 * which is most of the garbage a long stream would make), anything else as a fresh copy.
 */
import { Option, type SchemaAST } from "effect"

export const INVALID: unique symbol = Symbol.for("@rewind/contracts/plainCodec/INVALID")
export type Plain = (input: unknown) => unknown

const parseOptions: SchemaAST.ParseOptions = {}

const compile = (ast: SchemaAST.AST): Plain | undefined => {
  switch (ast._tag) {
    case "StringKeyword":
      return (u) => (typeof u === "string" ? u : INVALID)
    case "NumberKeyword":
      return (u) => (typeof u === "number" ? u : INVALID)
    case "BooleanKeyword":
      return (u) => (typeof u === "boolean" ? u : INVALID)
    case "UnknownKeyword":
    case "AnyKeyword":
      return (u) => u
    case "UndefinedKeyword":
      return (u) => (u === undefined ? u : INVALID)
    case "Literal": {
      const literal = ast.literal
      return (u) => (u === literal ? u : INVALID)
    }
    case "Refinement": {
      const from = compile(ast.from)
      if (from === undefined) return undefined
      const refinement = ast
      return (u) => {
        const value = from(u)
        if (value === INVALID) return INVALID
        return Option.isNone(refinement.filter(value, parseOptions, refinement)) ? value : INVALID
      }
    }
    case "Union": {
      const members: Array<Plain> = []
      for (const t of ast.types) {
        const member = compile(t)
        if (member === undefined) return undefined
        members.push(member)
      }
      return (u) => {
        for (const member of members) {
          const value = member(u)
          if (value !== INVALID) return value
        }
        return INVALID
      }
    }
    case "TupleType": {
      // Arrays and non-empty arrays: required leading elements, then at most one rest type.
      if (ast.rest.length > 1 || ast.elements.some((e) => e.isOptional)) return undefined
      const heads: Array<Plain> = []
      for (const e of ast.elements) {
        const head = compile(e.type)
        if (head === undefined) return undefined
        heads.push(head)
      }
      const rest = ast.rest.length === 1 ? compile(ast.rest[0]!.type) : null
      if (rest === undefined) return undefined
      return (u) => {
        if (!Array.isArray(u) || u.length < heads.length || (rest === null && u.length > heads.length))
          return INVALID
        let out: Array<unknown> | undefined
        for (let i = 0; i < u.length; i++) {
          const value = (i < heads.length ? heads[i]! : rest!)(u[i])
          if (value === INVALID) return INVALID
          if (value !== u[i]) {
            out ??= u.slice(0, i)
            out.push(value)
          } else if (out !== undefined) out.push(value)
        }
        return out ?? u
      }
    }
    case "TypeLiteral": {
      // A record of string keys (`Schema.Record({ key: Schema.String, value })`) on its own.
      if (ast.indexSignatures.length > 0) {
        const [index] = ast.indexSignatures
        if (
          ast.propertySignatures.length > 0 ||
          ast.indexSignatures.length > 1 ||
          index!.parameter._tag !== "StringKeyword"
        )
          return undefined
        const value = compile(index!.type)
        if (value === undefined) return undefined
        return (u) => {
          if (typeof u !== "object" || u === null || Array.isArray(u)) return INVALID
          let out: Record<string, unknown> | undefined
          const keys = Object.keys(u)
          for (let i = 0; i < keys.length; i++) {
            const key = keys[i]!
            const before = (u as Record<string, unknown>)[key]
            const v = value(before)
            if (v === INVALID) return INVALID
            if (v !== before && out === undefined) {
              out = {}
              for (let j = 0; j < i; j++) out[keys[j]!] = (u as Record<string, unknown>)[keys[j]!]
            }
            if (out !== undefined) out[key] = v
          }
          return out ?? u
        }
      }
      const props: Array<{ name: string; optional: boolean; check: Plain }> = []
      for (const p of ast.propertySignatures) {
        if (typeof p.name !== "string") return undefined
        const check = compile(p.type)
        if (check === undefined) return undefined
        props.push({ name: p.name, optional: p.isOptional, check })
      }
      // A value read as undefined may still be present (an explicit undefined): only then is `in`
      // asked, so a present property costs one lookup.
      const has = (input: Record<string, unknown>, name: string, value: unknown) =>
        value !== undefined || name in input
      // The rebuild when something below changed or must be stripped: a fresh object of only the
      // declared properties (checks run again; they are pure).
      const rebuild = (input: Record<string, unknown>): Record<string, unknown> | typeof INVALID => {
        const out: Record<string, unknown> = {}
        for (let i = 0; i < props.length; i++) {
          const p = props[i]!
          const before = input[p.name]
          if (!has(input, p.name, before)) continue
          const value = p.check(before)
          if (value === INVALID) return INVALID
          out[p.name] = value
        }
        return out
      }
      return (u) => {
        if (typeof u !== "object" || u === null || Array.isArray(u)) return INVALID
        const input = u as Record<string, unknown>
        // The usual case allocates nothing: every declared property checks out as it is.
        let present = 0
        let changed = false
        for (let i = 0; i < props.length; i++) {
          const p = props[i]!
          const before = input[p.name]
          if (!has(input, p.name, before)) {
            if (p.optional) continue
            return INVALID
          }
          const value = p.check(before)
          if (value === INVALID) return INVALID
          if (value !== before) changed = true
          present++
        }
        // Nothing to strip and nothing changed below: the input is the answer.
        if (!changed && Object.keys(input).length === present) return input
        return rebuild(input)
      }
    }
    default:
      return undefined
  }
}

/** The compiled checker of a plain schema's AST, or undefined when it is not plain. */
export const compilePlain = (ast: SchemaAST.AST): Plain | undefined => compile(ast)
