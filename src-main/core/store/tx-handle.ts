/**
 * What both engines hand a transaction's function: the store's own statements (which join the
 * open transaction by themselves) and what belongs to that transaction, found through the
 * engine's current frame so a handle kept past its transaction refuses to act.
 */
import type { Queryable, Tx } from './port'

/** The part of an open transaction a handle reaches. */
export interface OpenTx {
  readOnly: boolean
  after: (() => void)[]
  notes: [string, string][]
}

export function txHandle(
  store: Queryable,
  current: () => OpenTx | undefined,
  nextId: (table: string) => Promise<number>
): Tx {
  const open = (): OpenTx => {
    const t = current()
    if (!t) throw new Error('could not use the transaction: it has ended')
    return t
  }
  return {
    get: (sql, ...args) => store.get(sql, ...args),
    all: (sql, ...args) => store.all(sql, ...args),
    value: (sql, ...args) => store.value(sql, ...args),
    column: (sql, ...args) => store.column(sql, ...args),
    run: (sql, ...args) => store.run(sql, ...args),
    insert: (sql, ...args) => store.insert(sql, ...args),
    afterCommit: (f) => void open().after.push(f),
    notify: (channel, payload) => void open().notes.push([channel, payload]),
    nextId: async (table) => {
      if (open().readOnly) throw new Error('could not take an id: the transaction is read-only')
      return nextId(table)
    }
  }
}

/** A table name checked as a plain identifier, for the few statements that name one. */
export function identifier(name: string): string {
  if (!/^[a-z_][a-z0-9_]*$/.test(name)) throw new Error(`could not use ${JSON.stringify(name)} as a table name`)
  return name
}
