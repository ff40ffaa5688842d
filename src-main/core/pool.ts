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
