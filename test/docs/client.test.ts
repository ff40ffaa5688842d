/**
 * The typed client's types (client/schema.ts) are what openapi-typescript makes of
 * docs/openapi.json today, generated offline, and they name every operation by its operationId.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { CLIENT_SCHEMA_FILE, generateClientTypes, OPENAPI_FILE } from '../../scripts/openapi.mjs'
import { OFFLINE_MARKER, offlineEnv } from '../support/offline-tool'

const dir = mkdtempSync(join(tmpdir(), 'certdesk-client-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

describe('client/schema.ts', () => {
  it('is what the generator makes of docs/openapi.json', () => {
    const fresh = join(dir, 'schema.ts')
    const run = generateClientTypes(OPENAPI_FILE, fresh, offlineEnv())
    expect(run.stderr).not.toContain(OFFLINE_MARKER)
    expect(
      readFileSync(CLIENT_SCHEMA_FILE, 'utf8'),
      'client/schema.ts is stale: run `npm run docs:openapi` and commit the result'
    ).toBe(readFileSync(fresh, 'utf8'))
  })

  it('has every operation under its operationId, with the statuses the description gives it', () => {
    const doc = JSON.parse(readFileSync(OPENAPI_FILE, 'utf8')) as {
      paths: Record<string, Record<string, { operationId: string; responses: Record<string, unknown> }>>
    }
    const schema = readFileSync(CLIENT_SCHEMA_FILE, 'utf8')
    const operations = schema.slice(schema.indexOf('export interface operations {'))
    for (const item of Object.values(doc.paths))
      for (const op of Object.values(item)) {
        const start = operations.indexOf(`\n    ${op.operationId}: {`)
        expect(start, op.operationId).toBeGreaterThan(0)
        const body = operations.slice(start, operations.indexOf('\n    };', start))
        for (const code of Object.keys(op.responses)) expect(body, `${op.operationId} ${code}`).toContain(`${code}: `)
      }
  })
})
