/**
 * One error handler for the listener: every failure leaves as `{ success: false, error }`
 * with the status docs/decisions.md records. 5xx details stay in the process log.
 */
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { Socket } from 'node:net'
import { ACME_SETUP_PREFIX } from '../core/acme-server/acme-subscriptions'
import { RateLimitedError, ServiceError, type ErrorKind } from '../core/errors'
import { DEFAULT_RETRY_AFTER_SECONDS, RetryLaterError, storageFault } from '../core/store/store-faults'

export const STATUS_OF: Record<ErrorKind, number> = {
  invalid: 400,
  unauthorized: 401,
  payment_required: 402,
  forbidden: 403,
  not_found: 404,
  conflict: 409,
  rate_limited: 429,
  not_implemented: 501,
  unavailable: 503
}

export const failure = (error: string): { success: false; error: string } => ({ success: false, error })

/** `body/product_id must be integer` -> `product_id must be integer`, readable for a person. */
function validationMessage(err: FastifyError): string {
  const first = err.validation?.[0]
  if (!first) return err.message
  const where = (first.instancePath || '').replace(/^\//, '').replace(/\//g, '.')
  const context = err.validationContext ?? 'request'
  const params = first.params as Record<string, unknown>
  let what = first.message ?? 'is invalid'
  if (first.keyword === 'enum' && Array.isArray(params.allowedValues)) {
    what = `must be one of ${(params.allowedValues as unknown[]).join(', ')}`
  } else if (first.keyword === 'additionalProperties') {
    return `${context} has an unknown field ${JSON.stringify(params.additionalProperty)}`
  } else if (first.keyword === 'required') {
    return `${String(params.missingProperty)} is required`
  }
  return `${where || context} ${what}`
}

export function installErrorHandling(app: FastifyInstance): void {
  // Every 503 says when to come back (RFC 9110 §15.6.4), also those a route answers itself
  // (an ACME subscription the keychain could not store).
  app.addHook('onSend', async (_request, reply, payload) => {
    if (reply.statusCode === 503 && !reply.hasHeader('retry-after'))
      reply.header('retry-after', String(DEFAULT_RETRY_AFTER_SECONDS))
    return payload
  })
  app.setErrorHandler((caught: FastifyError, request, reply) => {
    // A full disk, a failing write or a locked store is a 503 to retry, never a 500.
    const fault = storageFault(caught)
    if (fault && !(caught instanceof ServiceError))
      request.log.warn({ code: (caught as { code?: unknown }).code }, fault.message)
    const err = (fault ?? caught) as FastifyError
    if (err instanceof ServiceError) {
      // RFC 6585 §4: a 429 says when to come back; RFC 9110 §15.6.4: so may a 503.
      if (err instanceof RateLimitedError || err instanceof RetryLaterError)
        reply.header('retry-after', String(err.retryAfterSeconds))
      else if (err.kind === 'unavailable') reply.header('retry-after', String(DEFAULT_RETRY_AFTER_SECONDS))
      return reply.code(STATUS_OF[err.kind]).send(failure(err.message))
    }
    if (err.validation) {
      return reply.code(400).send(failure(`invalid request: ${validationMessage(err)}`))
    }
    const status = err.statusCode ?? 500
    if (status >= 400 && status < 500) {
      const message =
        err.code === 'FST_ERR_CTP_INVALID_JSON_BODY' || err instanceof SyntaxError
          ? 'could not parse the request body: it is not valid JSON'
          : err.code === 'FST_ERR_CTP_BODY_TOO_LARGE'
            ? 'request body is larger than 1 MiB'
            : err.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE'
              ? 'request body must be JSON (Content-Type: application/json)'
              : err.message
      return reply.code(status).send(failure(message))
    }
    request.log.error({ err: { message: err.message, code: err.code, stack: err.stack } }, 'request failed')
    return reply.code(500).send(failure('internal server error; see the CertDesk log'))
  })
}

/**
 * A request node's HTTP parser refuses before fastify sees it (a bad request line, a header
 * over the size limit, a broken chunk) still gets the envelope, not fastify's own shape.
 */
export function clientErrorHandler(err: NodeJS.ErrnoException, socket: Socket): void {
  if (err.code === 'ECONNRESET' || socket.destroyed) return
  // A TLS failure (a handshake not finished in time, a client speaking no TLS) has no HTTP to
  // answer in: what would be written waits for a handshake that never comes. Close it at once.
  if (/^ERR_(TLS|SSL)_/.test(err.code ?? '') || 'library' in err) {
    socket.destroy()
    return
  }
  const [status, reason, message] =
    err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
      ? [408, 'Request Timeout', 'request timed out before it was complete']
      : err.code === 'HPE_HEADER_OVERFLOW'
        ? [431, 'Request Header Fields Too Large', 'request headers are larger than the server accepts']
        : [400, 'Bad Request', 'could not parse the request: it is not valid HTTP/1.1']
  endSocket(socket, status, reason, message)
}

/** CONNECT never reaches a route (node hands it over as a tunnel request): 405 like any other method. */
export function refuseConnect(_req: unknown, socket: Socket): void {
  endSocket(socket, 405, 'Method Not Allowed', 'method CONNECT is not allowed: this is the reseller API, not a proxy')
}

function endSocket(socket: Socket, status: number, reason: string, message: string): void {
  if (socket.destroyed) return
  const body = JSON.stringify(failure(message))
  socket.end(
    `HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/json; charset=utf-8\r\n` +
      `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`
  )
}

/** A path the router cannot decode (`/products/%ff`) is a 400 in the envelope. */
export function frameworkErrors(err: FastifyError, _request: FastifyRequest, reply: FastifyReply): void {
  const message =
    err.code === 'FST_ERR_BAD_URL'
      ? 'could not read the request path: it is not valid percent-encoded UTF-8'
      : 'could not route the request'
  void reply.code(400).send(failure(message))
}

/** Query parameters whose values are secrets wherever they appear (the browser-mode sign-in `token`, a key). */
const SECRET_PARAMS = new Set(['token', 'api_key', 'apikey', 'key', 'secret', 'password', 'access_token'])

const decodedName = (raw: string): string => {
  try {
    return decodeURIComponent(raw.replace(/\+/g, ' ')).trim().toLowerCase()
  } catch {
    return raw.toLowerCase()
  }
}

/**
 * What the request log shows of a URL (secrets never reach a log). Redacted: API keys
 * anywhere (`cdk_…`, a client that puts its key in the URL by mistake), the value of any secret
 * query parameter however its name is percent-encoded (the one-time sign-in link
 * `/ui/login?token=…` is logged at info), and the token of an ACME set-up page link.
 */
export function redactSecrets(url: string): string {
  const q = url.indexOf('?')
  const path = (q < 0 ? url : url.slice(0, q)).replace(
    new RegExp(`(${ACME_SETUP_PREFIX.replace(/[/.]/g, '\\$&')})[^/]+`, 'i'),
    '$1[redacted]'
  )
  const query =
    q < 0
      ? ''
      : '?' +
        url
          .slice(q + 1)
          .split('&')
          .map((pair) => {
            const eq = pair.indexOf('=')
            const name = eq < 0 ? pair : pair.slice(0, eq)
            return eq >= 0 && SECRET_PARAMS.has(decodedName(name)) ? `${name}=[redacted]` : pair
          })
          .join('&')
  return (path + query).replace(/cdk_[A-Za-z0-9_-]+/g, 'cdk_[redacted]')
}

export const logSerializers = {
  req: (req: FastifyRequest) => ({
    method: req.method,
    url: redactSecrets(req.url),
    hostname: req.hostname,
    remoteAddress: req.ip,
    remotePort: req.socket?.remotePort
  })
}
