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

interface ArmedRule<Op extends string> {
  readonly rule: FaultRule<Op>
  seen: number
  spent: boolean
}

export interface FaultBook<Op extends string> {
  readonly inject: (rule: FaultRule<Op>) => void
  readonly clear: () => void
  /** Decides, for one call, whether it fails and when; counts the call. */
  readonly decide: (operation: Op, target: string) => "before" | "after" | undefined
  /** Calls seen per operation since the book was made (or last cleared). */
  readonly calls: (operation?: Op) => number
  /** Failures injected so far. */
  readonly injected: () => number
}

export const makeFaultBook = <Op extends string>(): FaultBook<Op> => {
  let rules: Array<ArmedRule<Op>> = []
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
      let timing: "before" | "after" | undefined
      for (const armed of rules) {
        const { rule } = armed
        if (armed.spent || rule.operation !== operation) continue
        if (rule.target !== undefined && rule.target !== target) continue
        armed.seen += 1
        if (rule.nth !== undefined && (rule.persistent ? armed.seen < rule.nth : armed.seen !== rule.nth))
          continue
        if (!rule.persistent) armed.spent = true
        timing ??= rule.timing ?? "before"
      }
      if (timing !== undefined) injectedCount += 1
      return timing
    },
    calls: (operation) =>
      operation === undefined
        ? [...callCounts.values()].reduce((a, b) => a + b, 0)
        : (callCounts.get(operation) ?? 0),
    injected: () => injectedCount,
  }
}
