/**
 * The records the core returns and the bridge carries, written once as TypeBox schemas: the
 * types are `Static<>` of them, and the bridge checks the renderer's arguments against the same
 * schemas (src-main/app/validate.ts). The core imports the types; the renderer imports them with
 * `import type` only, so no schema code enters its bundle. Views are the records themselves, or
 * derived from them with `Omit<>`/`Pick<>` where the UI must not see a field.
 *
 * Everything here crosses a process boundary as structured-clone or JSON data: plain objects,
 * numbers and strings. Money is integer cents, dates are UTC text (`YYYY-MM-DD`,
 * `YYYY-MM-DD HH:MM:SS`).
 *
 * `must` on a schema is the reason the bridge gives when a value does not fit it, after the
 * argument's or field's name ("domain must be text").
 */
export * from './schema-kit'
export * from './account-records'
export * from './certificate-records'
export * from './installation-records'
export * from './admin-records'
