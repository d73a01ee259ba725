/**
 * The rule book shared by the fault-injecting wrappers: which call fails (the Nth of an operation,
 * every call on a path, or both), whether once or every time, and whether before the real call
 * (nothing happens) or after it (the effect happened but the caller is told it failed, like a lost
 * acknowledgement).
 */

export interface FaultRule<Op extends string> {
  readonly operation: Op
  /** Fail the Nth matching call (1-based), counted from when the rule was added. */
  readonly nth?: number
  /** Only calls on this path (workspace path or content hash). */
  readonly target?: string
  /** `before` (default): the call never reaches the real implementation. */
  readonly timing?: "before" | "after"
  /** Keep failing: every matching call (from the Nth on, when `nth` is given) instead of once. */
  readonly persistent?: boolean
}

interface ArmedRule<R> {
  readonly rule: R
  seen: number
  spent: boolean
}

export interface FaultBook<Op extends string, R extends FaultRule<Op> = FaultRule<Op>> {
  readonly inject: (rule: R) => void
  readonly clear: () => void
  /** Decides, for one call, whether it fails (the first rule that fires) and counts the call. */
  readonly decide: (operation: Op, target: string) => R | undefined
  /** Calls seen per operation since the book was made (or last cleared). */
  readonly calls: (operation?: Op) => number
  /** Failures injected so far. */
  readonly injected: () => number
}

export const makeFaultBook = <Op extends string, R extends FaultRule<Op> = FaultRule<Op>>(): FaultBook<
  Op,
  R
> => {
  let rules: Array<ArmedRule<R>> = []
  let callCounts = new Map<Op, number>()
  let injectedCount = 0
  return {
    inject: (rule) => {
      rules.push({ rule, seen: 0, spent: false })
    },
    clear: () => {
      rules = []
      callCounts = new Map()
      injectedCount = 0
    },
    decide: (operation, target) => {
      callCounts.set(operation, (callCounts.get(operation) ?? 0) + 1)
      let fired: R | undefined
      for (const armed of rules) {
        const { rule } = armed
        if (armed.spent || rule.operation !== operation) continue
        if (rule.target !== undefined && rule.target !== target) continue
        armed.seen += 1
        if (rule.nth !== undefined && (rule.persistent ? armed.seen < rule.nth : armed.seen !== rule.nth))
          continue
        if (!rule.persistent) armed.spent = true
        fired ??= rule
      }
      if (fired !== undefined) injectedCount += 1
      return fired
    },
    calls: (operation) =>
      operation === undefined
        ? [...callCounts.values()].reduce((a, b) => a + b, 0)
        : (callCounts.get(operation) ?? 0),
    injected: () => injectedCount,
  }
}
