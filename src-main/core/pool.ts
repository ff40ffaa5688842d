/**
 * Work over many items with a bound on how much runs at once: the scheduler's validations and
 * reissues, installation probes, endpoint scans. A bound keeps the sockets and the load one
 * batch of work opens in check; running side by side keeps one slow item from holding the rest.
 */

/** Runs `work` over every item with at most `limit` at once; answers in the items' order. */
export async function pool<T, R>(items: T[], limit: number, work: (item: T) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length)
  let next = 0
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const i = next++
      out[i] = await work(items[i])
    }
  }
  await Promise.all(Array.from({ length: Math.max(1, Math.min(limit, items.length)) }, worker))
  return out
}

/**
 * Runs `work` over every item one after another; answers in the items' order. For store calls
 * in a row (a page's records read one by one): inside a transaction they run one at a time
 * anyway, and two nested transactions must never run side by side (core/store).
 */
export async function inOrder<T, R>(items: readonly T[], work: (item: T, index: number) => Promise<R>): Promise<R[]> {
  const out: R[] = []
  for (let i = 0; i < items.length; i++) out.push(await work(items[i], i))
  return out
}
