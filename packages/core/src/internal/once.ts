/**
 * A value made on first use and kept: for what most callers never ask for but some do (a
 * repository's tracked set, parsed from its index; a scan's identity, which holds that set's hash).
 * `make` runs at most once; it must not throw (what can fail is a value of its own).
 */
export const once = <A>(make: () => A): (() => A) => {
  let made: { readonly value: A } | undefined
  return () => {
    if (made === undefined) made = { value: make() }
    return made.value
  }
}
