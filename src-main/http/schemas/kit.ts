/**
 * Building blocks of the reseller API's TypeBox schemas. A schema with a `title` becomes a named
 * component of /openapi.json (http/openapi/document.ts), so the title is the name a generated
 * client gives its type: keep titles unique, PascalCase, and on one schema each.
 */
import {
  Type,
  type ObjectOptions,
  type TInteger,
  type TObject,
  type TProperties,
  type TLiteral,
  type TSchema,
  type TUnion
} from '@sinclair/typebox'
import { DEFAULT_LIMIT, MAX_INTEGER, MAX_LIMIT } from '../paging'

/** A string enum that reads as one in errors and in OpenAPI (not an anyOf of literals). */
type Literals<T extends readonly string[]> = { -readonly [K in keyof T]: TLiteral<T[K]> }
export const StringEnum = <const T extends readonly string[]>(values: T, description?: string) =>
  Type.String({ enum: [...values], ...(description ? { description } : {}) }) as unknown as TUnion<Literals<T>>

export const Nullable = <T extends TSchema>(t: T) => Type.Union([t, Type.Null()])

export const Money = (description = 'USD, at most two decimals') => Type.Number({ description })

/** `YYYY-MM-DD`, UTC (design: "YYYY-MM-DD for dates"). */
export const Day = (description = 'a day, YYYY-MM-DD (UTC)') =>
  Type.String({ format: 'date', pattern: '^\\d{4}-\\d{2}-\\d{2}$', description, examples: ['2027-05-28'] })

/** `YYYY-MM-DD HH:MM:SS`, UTC: not RFC 3339 (no `T`, no zone), so a pattern rather than a format. */
export const TIMESTAMP_PATTERN = '^\\d{4}-\\d{2}-\\d{2} \\d{2}:\\d{2}:\\d{2}$'
export const Timestamp = (description = 'a moment, YYYY-MM-DD HH:MM:SS (UTC)') =>
  Type.String({ pattern: TIMESTAMP_PATTERN, description, examples: ['2026-11-23 19:33:11'] })

/** Ids of orders, products, invoices …: whole numbers from 1 to 2^53 − 1 (paging.ts). */
export const Id = (description: string) => Type.Integer({ minimum: 1, maximum: MAX_INTEGER, description })

/** Every failure: reseller API v3.0, "General response envelope". */
export const ErrorEnvelope = Type.Object(
  {
    success: Type.Literal(false),
    error: Type.String({ description: 'what went wrong, as a sentence for a person' })
  },
  { title: 'ErrorEnvelope', description: 'The envelope of every failure' }
)

/** The envelope of every 4xx and 5xx answer, as route schemas declare it. */
export const Failures = { '4xx': ErrorEnvelope, '5xx': ErrorEnvelope }

/** `{ success: true, message?, ...data }` (reseller API v3.0, "General response envelope"). */
export const ok = <P extends TProperties>(props: P, options: ObjectOptions = {}) =>
  Type.Object(
    {
      success: Type.Literal(true),
      message: Type.Optional(Type.String({ description: 'what was done, as a sentence for a person' })),
      ...props
    },
    options
  )

/**
 * A query string: unknown parameters are refused with 400 naming them (http/validators.ts), so a
 * misspelt filter never quietly returns everything.
 */
export const Query = <P extends TProperties>(props: P): TObject<P> =>
  Type.Object(props, { additionalProperties: false })

/** Path parameters: one id. */
export const IdParams = <K extends string>(name: K, description: string) =>
  Type.Object({ [name]: { ...Id(description), examples: [42] } } as Record<K, TInteger>)

export const Pagination = Type.Object(
  {
    total: Type.Integer({ minimum: 0, description: 'how many items match the filters, on every page' }),
    limit: Type.Integer({ minimum: 1, maximum: MAX_LIMIT, description: 'the page size used' }),
    offset: Type.Integer({ minimum: 0, maximum: MAX_INTEGER, description: 'the position of the first item' })
  },
  { title: 'Pagination', description: 'Where this page is in the whole list' }
)

export const PagingQuery = {
  limit: Type.Optional(
    Type.Integer({
      minimum: 1,
      maximum: MAX_INTEGER,
      default: DEFAULT_LIMIT,
      examples: [DEFAULT_LIMIT],
      description: `How many items one page holds: ${DEFAULT_LIMIT} unless you ask, at most ${MAX_LIMIT}. A larger value is served as ${MAX_LIMIT}, and pagination.limit says which size was used.`
    })
  ),
  offset: Type.Optional(
    Type.Integer({
      minimum: 0,
      maximum: MAX_INTEGER,
      default: 0,
      examples: [0],
      description:
        'How many items to skip from the newest: 0 for the first page, then add the limit for each next page.'
    })
  )
}

/** GET /openapi.json: the description itself, passed through as it is. */
export const OpenApiDocument = Type.Object(
  {
    openapi: Type.String(),
    info: Type.Object({}, { additionalProperties: true }),
    paths: Type.Object({}, { additionalProperties: true })
  },
  { additionalProperties: true, title: 'OpenApiDocument', description: 'An OpenAPI 3.0 document' }
)
