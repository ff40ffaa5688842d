/**
 * The bridge's envelope: a handler's result or failure as both transports (IPC and the
 * browser-mode RPC) answer it, with the reseller API's status codes, so the UI cannot tell them
 * apart. Kept apart from the handler table so the gate and the team client answer alike without
 * importing the table.
 */
import type { AppApi, AppMethod } from '../../src-shared/app-api'
import type { BridgeResult } from '../../src-preload/channels'
import { ServiceError } from '../core/errors'
import { storageFault } from '../core/store/store-faults'
import { STATUS_OF } from '../http/errors'
import { inScreenWords } from './error-words'

export type AppHandlers = {
  [K in AppMethod]: (...args: Parameters<AppApi[K]>) => Awaited<ReturnType<AppApi[K]>> | ReturnType<AppApi[K]>
}

export type BridgeAnswer = {
  status: number
  body: BridgeResult<unknown>
  fault?: unknown
}

/**
 * Runs one handler and answers in the bridge envelope; arguments that do not fit the contract's
 * schemas come back as 400 from the handler's own check. Core errors carry a message written for
 * a person; anything else comes back as `fault` for the caller's log and leaves without details.
 */
export async function callHandler(handlers: AppHandlers, method: AppMethod, args: unknown[]): Promise<BridgeAnswer> {
  try {
    const fn = handlers[method] as (...a: unknown[]) => unknown
    const result = await fn(...args)
    return { status: 200, body: { success: true, result: result === undefined ? null : result } }
  } catch (err) {
    return failureAnswer(err)
  }
}

/**
 * The envelope of a failure, with the reseller API's status codes; a core message in the screens'
 * words (error-words.ts).
 */
export function failureAnswer(err: unknown): BridgeAnswer {
  if (err instanceof ServiceError)
    return { status: STATUS_OF[err.kind], body: { success: false, error: inScreenWords(err.message) } }
  // A full disk, a failing write or a locked store: 503 to retry, as the reseller API answers.
  const fault = storageFault(err)
  if (fault) return { status: 503, body: { success: false, error: fault.message } }
  // usdToCents and date parsing say what is wrong with a value in a RangeError.
  if (err instanceof RangeError) return { status: 400, body: { success: false, error: err.message } }
  return { status: 500, body: { success: false, error: 'internal error; see the CertDesk log' }, fault: err }
}
