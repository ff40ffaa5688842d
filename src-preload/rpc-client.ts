/**
 * The browser-mode client: the same `AppApi`, derived from the contract's method list, over
 * POST /rpc/<method> on the local listener. The session cookie (HttpOnly, SameSite=Strict)
 * authenticates it; the page never sees a token or an API key.
 */
import {
  appMethodNames,
  RPC_PREFIX,
  SIGN_IN_PATH,
  SIGN_OUT_PATH,
  unwrap,
  type BridgeResult,
  type SignInNeed
} from './channels'
import type { AppApi } from '../src-shared/app-api'

export interface RpcClientOptions {
  baseUrl?: string
  fetch?: typeof fetch
  /** Extra headers, e.g. a cookie for tests running outside a browser. */
  headers?: Record<string, string>
  /**
   * Called with the server's message when the session is gone (401): signed out, idle too long,
   * or ended on the team server; `need` says which sign-in brings it back.
   */
  onUnauthorized?: (message: string, need: SignInNeed) => void
}

export function createRpcClient(opts: RpcClientOptions = {}): AppApi {
  const base = opts.baseUrl ?? ''
  const doFetch = opts.fetch ?? ((...a: Parameters<typeof fetch>) => fetch(...a))
  const call =
    (name: string) =>
    async (...args: unknown[]): Promise<unknown> => {
      let res: Response
      try {
        res = await doFetch(`${base}${RPC_PREFIX}${name}`, {
          method: 'POST',
          credentials: 'same-origin',
          headers: { 'content-type': 'application/json', accept: 'application/json', ...opts.headers },
          body: JSON.stringify({ args })
        })
      } catch (err) {
        throw new Error(`could not reach CertDesk: ${(err as Error).message}`, { cause: err })
      }
      let body: BridgeResult<unknown>
      try {
        body = (await res.json()) as BridgeResult<unknown>
      } catch {
        throw new Error(`could not reach CertDesk: HTTP ${res.status} without a JSON answer`)
      }
      if (res.status === 401 && body && body.success === false) opts.onUnauthorized?.(body.error, body.signIn ?? 'link')
      return unwrap(body)
    }
  return Object.fromEntries(appMethodNames.map((name) => [name, call(name)])) as unknown as AppApi
}

/** Ends the browser session on the server; its cookie opens nothing afterwards. */
export async function signOut(opts: Pick<RpcClientOptions, 'baseUrl' | 'fetch' | 'headers'> = {}): Promise<void> {
  const doFetch = opts.fetch ?? ((...a: Parameters<typeof fetch>) => fetch(...a))
  let res: Response
  try {
    res = await doFetch(`${opts.baseUrl ?? ''}${SIGN_OUT_PATH}`, {
      method: 'POST',
      credentials: 'same-origin',
      headers: { 'content-type': 'application/json', accept: 'application/json', ...opts.headers },
      body: '{}'
    })
  } catch (err) {
    throw new Error(`could not sign out: ${(err as Error).message}`, { cause: err })
  }
  if (!res.ok) throw new Error(`could not sign out: HTTP ${res.status}`)
}

/**
 * Signs in on a team server's own page with an admin account; the answer sets the session
 * cookie (HttpOnly: the page never holds it). Throws with the server's reason otherwise.
 */
export async function signInWithPassword(
  credentials: { name: string; password: string; code?: string },
  opts: Pick<RpcClientOptions, 'baseUrl' | 'fetch' | 'headers'> = {}
): Promise<void> {
  const doFetch = opts.fetch ?? ((...a: Parameters<typeof fetch>) => fetch(...a))
  let res: Response
  try {
    res = await doFetch(`${opts.baseUrl ?? ''}${SIGN_IN_PATH}`, {
      method: 'POST',
      credentials: 'same-origin',
      headers: { 'content-type': 'application/json', accept: 'application/json', ...opts.headers },
      body: JSON.stringify(credentials)
    })
  } catch (err) {
    throw new Error(`could not sign in: ${(err as Error).message}`, { cause: err })
  }
  let body: BridgeResult<unknown>
  try {
    body = (await res.json()) as BridgeResult<unknown>
  } catch {
    throw new Error(`could not sign in: HTTP ${res.status} without a JSON answer`)
  }
  if (!res.ok || !body.success) throw new Error(body.success ? `could not sign in: HTTP ${res.status}` : body.error)
}
