export const OPENAPI_FILE: string
export const CLIENT_SCHEMA_FILE: string
export function canonicalJson(doc: unknown): string
export function servedOpenApi(): Promise<Record<string, unknown>>
export function clientGeneratorArgs(input: string, output: string): string[]
export function generateClientTypes(
  input: string,
  output: string,
  env?: NodeJS.ProcessEnv
): { stdout: string; stderr: string; status: number | null }
