/**
 * A typed client of the CertDesk reseller API. The types come from docs/openapi.json
 * (`npm run docs:openapi` writes client/schema.ts with openapi-typescript); the calls go through
 * openapi-fetch, so `api.POST('/orders', { body })` checks the path, the body and the answer
 * against the description at compile time, and nothing here lists an endpoint by hand.
 *
 *   const api = certDesk({ baseUrl: 'http://127.0.0.1:7780', apiKey: process.env.CERTDESK_API_KEY })
 *   const { data, error, response } = await api.GET('/orders', { params: { query: { status: 'pending' } } })
 *
 * Each call answers `{ data }` on 200 or `{ error }` (the envelope `{ success: false, error }`)
 * otherwise, with the `response` to read the status and headers from: `status('createOrder',
 * response)` is typed with exactly the statuses the description gives that operation.
 */
import createClient, { type Client, type Middleware } from 'openapi-fetch'
import type { components, operations, paths } from './schema'

export type { components, operations, paths }

/** The named schemas: `Schema<'Order'>`, `Schema<'ErrorEnvelope'>` … */
export type Schema<Name extends keyof components['schemas']> = components['schemas'][Name]

/** An operation by its operationId: `'createOrder'`, `'cancelOrder'`, `'configureSsl'` … */
export type OperationId = keyof operations

/** The statuses the description gives an operation, as numbers: `Status<'createOrder'>` is 200 | 400 | 401 | 402 … */
export type Status<Op extends OperationId> = Extract<keyof operations[Op]['responses'], number>

/** The headers the description gives one answer of an operation. */
export type AnswerHeaders<Op extends OperationId, S extends Status<Op>> = operations[Op]['responses'][S] extends {
  headers: infer H
}
  ? H
  : never

export type CertDeskClient = Client<paths>

export interface CertDeskOptions {
  /** Where CertDesk listens; `certdesk serve` prints it (default http://127.0.0.1:7780). */
  baseUrl?: string
  /** The reseller API key (`cdk_…`), sent as X-API-Key on every request. */
  apiKey: string
  /** A fetch of your own (tests, proxies); the global fetch otherwise. */
  fetch?: (input: Request) => Promise<Response>
}

export const DEFAULT_BASE_URL = 'http://127.0.0.1:7780'

/** A client for one reseller account. */
export function certDesk(options: CertDeskOptions): CertDeskClient {
  if (!options.apiKey) throw new Error('could not create the CertDesk client: apiKey is empty')
  const client = createClient<paths>({
    baseUrl: (options.baseUrl ?? DEFAULT_BASE_URL).replace(/\/+$/, ''),
    headers: { accept: 'application/json' },
    ...(options.fetch ? { fetch: options.fetch } : {})
  })
  const auth: Middleware = {
    onRequest({ request }) {
      request.headers.set('x-api-key', options.apiKey)
      return request
    }
  }
  client.use(auth)
  return client
}

/** The status of an answer, typed with the statuses the description gives operation `op`. */
export function status<Op extends OperationId>(_op: Op, response: Response): Status<Op> {
  return response.status as Status<Op>
}

/** Seconds to wait before retrying, from a 429 or 503 (RFC 9110 §10.2.3); null when the answer has none. */
export function retryAfter(response: Response): number | null {
  const value = response.headers.get('retry-after')
  if (value === null || !/^\d+$/.test(value.trim())) return null
  return Number(value.trim())
}

/** Whether an answer is the first answer again, sent to a retry with the same Idempotency-Key. */
export const replayed = (response: Response): boolean => response.headers.get('idempotent-replayed') === 'true'

/** The failure of a call, with its status and the server's sentence. */
export class CertDeskError extends Error {
  constructor(
    readonly status: number,
    readonly error: string,
    readonly response: Response
  ) {
    super(`CertDesk answered ${status}: ${error}`)
    this.name = 'CertDeskError'
  }
}

/**
 * The data of a call that must succeed, or a CertDeskError with the status and the sentence
 * the server gave: `const { order } = await ok(api.GET('/orders/{id}', { params: { path: { id } } }))`.
 */
export async function ok<T>(call: Promise<{ data?: T; error?: unknown; response: Response }>): Promise<NonNullable<T>> {
  const { data, error, response } = await call
  if (response.ok && data !== undefined && data !== null) return data as NonNullable<T>
  const said = (error as Partial<Schema<'ErrorEnvelope'>> | undefined)?.error
  throw new CertDeskError(response.status, typeof said === 'string' ? said : response.statusText, response)
}
