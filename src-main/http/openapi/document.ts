/**
 * The OpenAPI description served at GET /openapi.json (and kept in docs/openapi.json). fastify's
 * swagger plugin writes the operations from the route schemas; `shapeDocument` then gives it
 * what a client generator reads: named components (every schema with a `title`), each status an
 * operation really answers with its headers and an example (operations.ts), tags and servers.
 */
import type { SwaggerOptions } from '@fastify/swagger'
import { DEFAULT_RETRY_AFTER_SECONDS } from '../../core/store/store-faults'
import { MAX_IDEMPOTENCY_KEY_LENGTH } from '../../core/orders/idempotency'
import { CORE_EXPLAINS, INVALID_MESSAGE } from '../validators'
import { OPERATIONS, type OperationDoc } from './operations'

type Json = Record<string, unknown>
type Status = '400' | '401' | '402' | '403' | '404' | '405' | '409' | '413' | '415' | '429' | '500' | '503'

export const TAGS = [
  { name: 'Products', description: 'The catalogue of your reseller group, with your prices.' },
  { name: 'Orders', description: 'Placing, listing and cancelling orders; every order is paid from your credit.' },
  {
    name: 'SSL',
    description: 'From CSR to certificate: submitting the CSR, domain validation, approval emails and reissues.'
  },
  { name: 'Certificates', description: 'The status of an order’s certificate, and the certificate itself.' },
  {
    name: 'ACME subscriptions',
    description: "Subscriptions a customer's ACME client renews by itself, and the root its directory chains to."
  },
  { name: 'Invoices', description: 'The invoice of every order.' },
  { name: 'Credits', description: 'Your prepaid credit balance in USD and its history.' },
  { name: 'Account', description: 'Your reseller account and its statistics.' },
  { name: 'Events', description: 'What happened to your orders and certificates, newest first.' },
  { name: 'Renewal', description: 'How an order renews without the customer.' },
  { name: 'Installations', description: 'Whether the servers of an order present the certificate issued here.' },
  { name: 'Reports', description: 'Certificates that end soon, issued here or imported.' },
  { name: 'Description', description: 'This OpenAPI description.' }
]

const HEADERS: Json = {
  RetryAfter: {
    description: 'Seconds to wait before trying again (RFC 9110 §10.2.3).',
    required: true,
    schema: { type: 'integer', minimum: 0, example: DEFAULT_RETRY_AFTER_SECONDS }
  },
  Allow: {
    description: 'The methods this path serves (RFC 9110 §10.2.1).',
    required: true,
    schema: { type: 'string', example: 'GET, HEAD, POST' }
  },
  IdempotentReplayed: {
    description:
      'true when this is the first answer again, sent to a retry with the same Idempotency-Key and body; nothing was charged again. Absent on a first answer.',
    required: false,
    schema: { type: 'string', enum: ['true'] }
  }
}

const failure = (error: string) => ({ success: false, error })
const envelope = (error: string) => ({
  'application/json': { schema: { $ref: '#/components/schemas/ErrorEnvelope' }, example: failure(error) }
})

/** What each status means to a script, and its example where operations.ts gives none. */
const STATUS: Record<Status, { description: string; example: string; headers?: Json }> = {
  '400': {
    description:
      'The request is not valid: a parameter or field is missing, of the wrong type, out of range or unknown (the error names it), or a value the operation cannot accept. Nothing changed.',
    example: 'invalid request: unknown query parameter "sort"'
  },
  '401': {
    description: 'No API key, a wrong or revoked key, API access disabled, or the account suspended.',
    example: 'invalid API key'
  },
  '402': {
    description: 'Your credit balance is short; nothing was created or charged. Top up and retry.',
    example: 'insufficient credit balance: required 57.72 USD, available 12.00 USD'
  },
  '403': {
    description:
      'Refused: the Host header is not a loopback name (nor the configured host), or your account has no reseller group or no access to the product.',
    example: 'request refused: the Host header is not a loopback name'
  },
  '404': {
    description: 'No such item of yours: another reseller’s order, invoice or certificate is 404 too.',
    example: 'order 4242 not found'
  },
  '405': {
    description: 'This path does not serve the method used; Allow lists the methods it does serve.',
    example: 'method DELETE is not allowed on /orders; allowed: GET, HEAD, POST',
    headers: { Allow: { $ref: '#/components/headers/Allow' } }
  },
  '409': {
    description: 'The state of the order (or a reused Idempotency-Key) forbids this; nothing changed.',
    example: 'Idempotency-Key was already used with a different request'
  },
  '413': { description: 'The body is larger than 1 MiB.', example: 'request body is larger than 1 MiB' },
  '415': {
    description: 'The body is not JSON: send it with Content-Type: application/json.',
    example: 'request body must be JSON (Content-Type: application/json)'
  },
  '429': {
    description: 'Too many of these for now; nothing changed. Retry-After says when to try again.',
    example: 'too many requests; try again in 60 seconds',
    headers: { 'Retry-After': { $ref: '#/components/headers/RetryAfter' } }
  },
  '500': {
    description: 'A fault inside CertDesk; the details are in its log only.',
    example: 'internal server error; see the CertDesk log'
  },
  '503': {
    description:
      'CertDesk cannot do this right now (the store is busy or full, the OS keychain is locked or gone, the mail server refuses); nothing changed unless the error says so. Retry-After says when to try again.',
    example: 'could not save the change: another process holds the store locked; nothing was changed, try again in 5 s',
    headers: { 'Retry-After': { $ref: '#/components/headers/RetryAfter' } }
  }
}

/** The shared answers, as `components.responses`, for statuses an operation has no example of its own for. */
const SHARED: Partial<Record<Status, string>> = {
  '400': 'BadRequest',
  '401': 'Unauthorized',
  '403': 'Forbidden',
  '405': 'MethodNotAllowed',
  '413': 'PayloadTooLarge',
  '415': 'UnsupportedMediaType',
  '500': 'InternalError',
  '503': 'ServiceUnavailable'
}

const response = (status: Status, example: string): Json => ({
  description: STATUS[status].description,
  ...(STATUS[status].headers ? { headers: STATUS[status].headers } : {}),
  content: envelope(example)
})

/** Every status `op` answers besides 200, in order. */
function errorStatuses(doc: OperationDoc, hasBody: boolean): Status[] {
  const own = Object.keys(doc.errors) as Status[]
  const always: Status[] = doc.public ? ['400', '403', '405', '500', '503'] : ['400', '401', '403', '405', '500', '503']
  const body: Status[] = hasBody ? ['413', '415'] : []
  return [...new Set<Status>([...always, ...body, ...own])].sort()
}

function responsesOf(op: Json, doc: OperationDoc, used: Set<Status>): Json {
  const generated = (op.responses as Json)['200'] as Json
  const content = generated.content as Record<string, Json>
  const [type] = Object.keys(content)
  const ok: Json = {
    description: doc.ok,
    ...(doc.idempotent
      ? { headers: { 'Idempotent-Replayed': { $ref: '#/components/headers/IdempotentReplayed' } } }
      : {}),
    content: { [type]: { ...content[type], example: doc.answer } }
  }
  const out: Json = { '200': ok }
  for (const status of errorStatuses(doc, op.requestBody !== undefined)) {
    const example = doc.errors[Number(status) as keyof OperationDoc['errors']]
    if (example === undefined && SHARED[status]) {
      used.add(status)
      out[status] = { $ref: `#/components/responses/${SHARED[status]}` }
    } else out[status] = response(status, example ?? STATUS[status].example)
  }
  return out
}

/** Schemas with a title leave the operations for `components.schemas` and are referred to by name. */
function nameSchemas(doc: Json): void {
  const components = ((doc.components as Json).schemas ??= {}) as Json
  const name = (schema: unknown): unknown => {
    if (Array.isArray(schema)) return schema.map(name)
    if (schema === null || typeof schema !== 'object') return schema
    const s = { ...(schema as Json) }
    // How the server words a refusal is its own business, not the description's.
    delete s[INVALID_MESSAGE]
    delete s[CORE_EXPLAINS]
    // OpenAPI 3.0 schemas take one `example`; JSON Schema's `examples` list is 3.1's.
    if (Array.isArray(s.examples)) {
      if (s.example === undefined) s.example = s.examples[0]
      delete s.examples
    }
    for (const key of ['items', 'additionalProperties', 'not'])
      if (s[key] && typeof s[key] === 'object') s[key] = name(s[key])
    for (const key of ['anyOf', 'oneOf', 'allOf']) if (Array.isArray(s[key])) s[key] = name(s[key])
    if (s.properties)
      s.properties = Object.fromEntries(Object.entries(s.properties as Json).map(([k, v]) => [k, name(v)]))
    const title = s.title
    if (typeof title !== 'string' || !/^[A-Z][A-Za-z0-9]+$/.test(title)) return s
    const known = components[title]
    if (known !== undefined && JSON.stringify(known) !== JSON.stringify(s))
      throw new Error(`could not describe the API: two different schemas are titled ${title}`)
    components[title] = s
    return { $ref: `#/components/schemas/${title}` }
  }
  const inMedia = (content: unknown) => {
    for (const media of Object.values((content ?? {}) as Record<string, Json>))
      if (media.schema) media.schema = name(media.schema)
  }
  for (const item of Object.values(doc.paths as Record<string, Record<string, Json>>)) {
    for (const op of Object.values(item)) {
      for (const p of (op.parameters ?? []) as Json[]) if (p.schema) p.schema = name(p.schema)
      inMedia((op.requestBody as Json | undefined)?.content)
      for (const r of Object.values((op.responses ?? {}) as Record<string, Json>)) inMedia(r.content)
    }
  }
}

/**
 * A discriminated union of OpenAPI 3.0 is a `oneOf` (§4.8.25); TypeBox writes unions as
 * `anyOf`. The branches of one with a discriminator exclude each other by that property.
 */
function oneOfWhereDiscriminated(schemas: Json): void {
  for (const s of Object.values(schemas) as Json[])
    if (s.discriminator && Array.isArray(s.anyOf)) {
      s.oneOf = s.anyOf
      delete s.anyOf
    }
}

export function shapeDocument(doc: Json): Json {
  // First: the envelope of the generated 4XX answers becomes the ErrorEnvelope component.
  nameSchemas(doc)
  const used = new Set<Status>()
  for (const [path, item] of Object.entries(doc.paths as Record<string, Record<string, Json>>)) {
    for (const [method, op] of Object.entries(item)) {
      const id = op.operationId as string
      const entry = OPERATIONS[id]
      if (!entry)
        throw new Error(`could not describe ${method.toUpperCase()} ${path}: ${id} has no entry in operations.ts`)
      op.responses = responsesOf(op, entry, used)
      const body = (op.requestBody as Json | undefined)?.content as Record<string, Json> | undefined
      if (body && entry.request !== undefined) for (const media of Object.values(body)) media.example = entry.request
    }
  }
  const components = doc.components as Json
  oneOfWhereDiscriminated(components.schemas as Json)
  components.headers = HEADERS
  components.responses = Object.fromEntries(
    [...used].sort().map((status) => [SHARED[status] as string, response(status, STATUS[status].example)])
  )
  return doc
}

export const swaggerOptions = (version: string): SwaggerOptions => ({
  openapi: {
    openapi: '3.0.3',
    info: {
      title: 'CertDesk reseller API',
      version,
      description: `The reseller API v3.0 served by CertDesk on this machine: list products, place and cancel orders paid from credit, configure and download certificates, set up ACME subscriptions, read invoices, credits, statistics and events. Every answer is the envelope {success, ...} or {success: false, error}. Idempotency-Key (1 to ${MAX_IDEMPOTENCY_KEY_LENGTH} visible ASCII characters) makes POST /orders and POST /credits safe to retry.`,
      // package.json grants no licence ("private"); npm's name for that is UNLICENSED.
      license: {
        name: 'UNLICENSED (private software: no licence is granted)',
        url: 'https://docs.npmjs.com/cli/configuring-npm/package-json#license'
      }
    },
    servers: [
      {
        url: 'http://127.0.0.1:{port}',
        description: 'CertDesk on this machine (npm start, certdesk serve; --port changes the port)',
        variables: { port: { default: '7780', description: 'the listener port' } }
      }
    ],
    tags: TAGS,
    components: {
      securitySchemes: {
        apiKey: { type: 'apiKey', in: 'header', name: 'X-API-Key', description: 'Your API key (cdk_…).' },
        bearer: { type: 'http', scheme: 'bearer', description: 'The same API key as a bearer token.' }
      }
    },
    security: [{ apiKey: [] }, { bearer: [] }]
  },
  transformObject: (documents) =>
    shapeDocument((documents as unknown as { openapiObject: Json }).openapiObject) as never
})
