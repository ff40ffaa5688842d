export const OPENAPI_FILE: string
export function canonicalJson(doc: unknown): string
export function servedOpenApi(): Promise<Record<string, unknown>>
