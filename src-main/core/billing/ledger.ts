/**
 * The prepaid credit ledger. Every balance change goes through `post`, which must run inside
 * the caller's SQLite transaction and writes the balance and its ledger row together.
 */
import type { CoreContext } from '../context'
import { invalid, notFound, paymentRequired } from '../errors'
import { formatUsd, type Cents } from './money'
import { countLedger } from './tallies'
import { resellerScope } from '../store/store-version'
import { isoTimestamp } from '../time'
import type { CreditTransaction, Page } from '../../../src-shared/records'
import type { Store } from '../store'

export type { CreditTransaction, Page } from '../../../src-shared/records'

/**
 * Whether a balance pays a debit: the ledger never lets a balance go below zero, so a debit
 * larger than the balance is refused with 402 (reseller API v3.0 "Errors": insufficient credit).
 */
export const coversDebit = (balance: Cents, amount: Cents): boolean => balance - amount >= 0

export interface Paging {
  limit: number
  offset: number
}

export interface Posting {
  resellerId: number
  amount: Cents
  description: string
  orderId?: number | null
  at: Date
}

/**
 * Applies one signed amount to a reseller's balance and records it. Throws 402 (and changes
 * nothing) when a debit would take the balance below zero. Runs only inside a transaction.
 *
 * The ledger row and the balance change go out together, without one waiting for the other's
 * answer (one round trip on PostgreSQL, store/postgres-engine.ts `send`): both take the same
 * condition on the balance as it was, so either both happen or neither does, and the row
 * holds the balance the change leaves.
 */
export async function post(db: Store, p: Posting): Promise<CreditTransaction> {
  if (!Number.isInteger(p.amount) || p.amount === 0) throw invalid('amount must be a non-zero number of cents')
  if (!db.inTransaction()) throw new Error('could not change a balance outside a transaction')
  const createdAt = isoTimestamp(p.at)
  const type = p.amount < 0 ? 'debit' : 'credit'
  const [row, updated] = await Promise.all([
    db.get<{ id: number; balance: number }>(
      `INSERT INTO credit_transactions (reseller_id, amount_cents, type, description, balance_after_cents, order_id, created_at)
         SELECT ?, ?, ?, ?, credit_balance_cents + ?, ?, ? FROM resellers WHERE id = ? AND credit_balance_cents + ? >= 0
         RETURNING id, balance_after_cents AS balance`,
      p.resellerId,
      p.amount,
      type,
      p.description,
      p.amount,
      p.orderId ?? null,
      createdAt,
      p.resellerId,
      p.amount
    ),
    db.get<{ balance: number }>(
      `UPDATE resellers SET credit_balance_cents = credit_balance_cents + ?
         WHERE id = ? AND credit_balance_cents + ? >= 0 RETURNING credit_balance_cents AS balance`,
      p.amount,
      p.resellerId,
      p.amount
    )
  ])
  if (row?.balance !== updated?.balance) throw new Error('could not change the balance: its ledger row disagrees')
  if (!row || !updated) {
    const now = (await db.get('SELECT credit_balance_cents AS balance FROM resellers WHERE id = ?', p.resellerId)) as
      { balance: number } | undefined
    if (!now) throw notFound(`reseller ${p.resellerId} not found`)
    throw paymentRequired(
      `insufficient credit balance: required ${formatUsd(-p.amount)}, available ${formatUsd(now.balance)}`
    )
  }
  return {
    id: row.id,
    amount: p.amount,
    type,
    description: p.description,
    balanceAfter: row.balance,
    orderId: p.orderId ?? null,
    createdAt
  }
}

const TX_COLUMNS = `id, amount_cents AS amount, type, description, balance_after_cents AS balanceAfter,
  order_id AS orderId, created_at AS createdAt`

export class Ledger {
  constructor(private readonly ctx: CoreContext) {}

  async balance(resellerId: number): Promise<Cents> {
    const row = (await this.ctx.store.get(
      'SELECT credit_balance_cents AS b FROM resellers WHERE id = ?',
      resellerId
    )) as { b: number } | undefined
    if (!row) throw notFound(`reseller ${resellerId} not found`)
    return row.b
  }

  /** A top-up recorded by the admin (a payment received outside CertDesk). */
  async topUp(resellerId: number, amount: Cents, description = 'Credit top-up'): Promise<CreditTransaction> {
    if (!Number.isInteger(amount) || amount <= 0) throw invalid('a top-up must be a positive amount')
    if (amount > 100_000_000_00) throw invalid('a top-up may be at most 100000000.00 USD')
    const db = this.ctx.store
    return await db.tx(async () => await post(db, { resellerId, amount, description, at: this.ctx.clock() }), {
      queue: resellerScope(resellerId)
    })
  }

  async transactions(resellerId: number, page: Paging): Promise<Page<CreditTransaction>> {
    const items = (await this.ctx.store.all(
      `SELECT ${TX_COLUMNS} FROM credit_transactions WHERE reseller_id = ? ORDER BY id DESC LIMIT ? OFFSET ?`,
      resellerId,
      page.limit,
      page.offset
    )) as CreditTransaction[]
    return { items, total: await countLedger(this.ctx.store, resellerId), ...page }
  }
}
