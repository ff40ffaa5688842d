/**
 * TypeBox schemas of the reseller API v3.0 (its section "Resources and their fields" gives the
 * shapes). They validate requests, serialise responses and make /openapi.json; handler types
 * come from them (`Static<typeof X>`), so validation, types and the description are one thing.
 */
export * from './kit'
export * from './catalogue'
export * from './orders'
export * from './billing'
export * from './acme'
export * from './events'
export * from './certificates'
export * from './installations'
