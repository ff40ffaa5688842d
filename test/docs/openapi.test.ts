/**
 * docs/openapi.json is the document the reseller API serves at GET /openapi.json. A route or
 * schema change that is not regenerated into it fails here, against a real listener on
 * loopback (real SQLite, the real keychain of global-setup), not against another build.
 */
import { existsSync, readFileSync } from 'node:fs'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { canonicalJson, OPENAPI_FILE } from '../../scripts/openapi.mjs'
import { startServer, type TestServer } from '../support/server'

const REGENERATE = 'docs/openapi.json is stale: run `npm run docs:openapi` and commit the result'

type Doc = { paths?: Record<string, Record<string, unknown>> }

/** `GET /orders`-style operation names, for a message that says what moved. */
const operations = (doc: Doc): Set<string> =>
  new Set(
    Object.entries(doc.paths ?? {}).flatMap(([path, ops]) => Object.keys(ops).map((m) => `${m.toUpperCase()} ${path}`))
  )

describe('docs/openapi.json', () => {
  let server: TestServer
  let key: string

  beforeAll(async () => {
    server = await startServer()
    key = (await server.reseller()).key
  })
  afterAll(async () => {
    await server?.close()
  })

  it('is what the running server serves at /openapi.json', async () => {
    expect(existsSync(OPENAPI_FILE), `${OPENAPI_FILE} is missing: run \`npm run docs:openapi\``).toBe(true)
    const res = await server.request<Doc>('GET', '/openapi.json', { key })
    expect(res.status).toBe(200)

    const committed = JSON.parse(readFileSync(OPENAPI_FILE, 'utf8')) as Doc
    const served = operations(res.body)
    const written = operations(committed)
    const missing = [...served].filter((op) => !written.has(op))
    const extra = [...written].filter((op) => !served.has(op))
    const detail = [
      missing.length ? `served but not in the file: ${missing.join(', ')}` : '',
      extra.length ? `in the file but no longer served: ${extra.join(', ')}` : ''
    ]
      .filter(Boolean)
      .join('; ')

    expect(readFileSync(OPENAPI_FILE, 'utf8'), detail ? `${REGENERATE} (${detail})` : REGENERATE).toBe(
      canonicalJson(res.body)
    )
  })
})
