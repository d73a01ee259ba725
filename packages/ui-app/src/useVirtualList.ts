/**
 * A virtualised list for Preact over `@tanstack/virtual-core` (framework-agnostic; its React
 * adapter is the same few lines): only the rows in view, plus an overscan, are rendered, so a
 * 10,000-message timeline costs what a screenful does. Rows have one fixed height.
 */
import {
  elementScroll,
  observeElementOffset,
  observeElementRect,
  Virtualizer,
  type VirtualizerOptions,
} from "@tanstack/virtual-core"
import { useLayoutEffect, useReducer, useState } from "preact/hooks"

export const useVirtualList = (count: number, rowHeight: number, scrollElement: () => HTMLElement | null) => {
  const [, rerender] = useReducer((n: number) => n + 1, 0)
  const options: VirtualizerOptions<HTMLElement, Element> = {
    count,
    getScrollElement: scrollElement,
    estimateSize: () => rowHeight,
    scrollToFn: elementScroll,
    observeElementRect,
    observeElementOffset,
    overscan: 12,
    onChange: () => rerender(0),
  }
  const [virtualizer] = useState(() => new Virtualizer(options))
  virtualizer.setOptions(options)
  useLayoutEffect(() => virtualizer._didMount(), [])
  useLayoutEffect(() => {
    virtualizer._willUpdate()
  })
  return virtualizer
}
