// `npm run docs:openapi`: writes docs/openapi.json, the OpenAPI document the reseller API serves
// at GET /openapi.json, and the types of the typed client from it (client/schema.ts). It builds the listener from the sources (vite's module runner, the same
// transform as the app build) over a scratch data dir, asks it through fastify's inject (no
// socket is opened), and writes the answer with sorted keys, so a diff shows real changes only.
// test/docs/openapi.test.ts fails when the file no longer matches what a running server serves,
// and test/docs/client.test.ts when client/schema.ts is not what the generator makes of it.
import { spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
export const OPENAPI_FILE = join(root, 'docs', 'openapi.json')
export const CLIENT_SCHEMA_FILE = join(root, 'client', 'schema.ts')

/**
 * openapi-typescript's command line for the client's types. A request field with a default
 * (`period`, `san_count`) stays optional: the server fills it in.
 */
export const clientGeneratorArgs = (input, output) => [input, '--output', output, '--default-non-nullable', 'false']

/** Writes the client's types for the description in `input` to `output`; throws with the generator's words. */
export function generateClientTypes(input, output, env = process.env) {
  const run = spawnSync(join(root, 'node_modules', '.bin', 'openapi-typescript'), clientGeneratorArgs(input, output), {
    cwd: root,
    env,
    encoding: 'utf8'
  })
  if (run.status !== 0) throw new Error(`could not generate the client types: ${run.stderr || run.stdout}`)
  return run
}

/** Objects with their keys sorted (recursively); arrays keep their order, which carries meaning. */
function sortKeys(value) {
  if (Array.isArray(value)) return value.map(sortKeys)
  if (value === null || typeof value !== 'object') return value
  return Object.fromEntries(
    Object.keys(value)
      .sort()
      .map((k) => [k, sortKeys(value[k])])
  )
}

/** The text docs/openapi.json holds for a document: sorted keys, two-space indent, final newline. */
export const canonicalJson = (doc) => `${JSON.stringify(sortKeys(doc), null, 2)}\n`

/**
 * The scratch data dir is deleted afterwards, so its secrets (the API key that reads the
 * document) stay in memory rather than in the OS keychain, where they would outlive it.
 */
class ScratchSecrets {
  #values = new Map()
  get(name) {
    return this.#values.get(name) ?? null
  }
  set(name, value) {
    this.#values.set(name, value)
  }
  delete(name) {
    this.#values.delete(name)
  }
}

/** GET /openapi.json of a listener built from the sources, as a parsed document. */
export async function servedOpenApi() {
  const { createServer, createServerModuleRunner } = await import('vite')
  const vite = await createServer({
    root,
    configFile: false,
    logLevel: 'error',
    appType: 'custom',
    server: { middlewareMode: true, hmr: false, ws: false },
    optimizeDeps: { noDiscovery: true, include: [] }
  })
  const runner = createServerModuleRunner(vite.environments.ssr, { hmr: false })
  const dataDir = mkdtempSync(join(tmpdir(), 'certdesk-openapi-'))
  let service = null
  let app = null
  try {
    // One runner for both modules: the core's error classes must be the ones the listener checks.
    const { openService } = await runner.import('/src-main/core/service.ts')
    const { buildServer } = await runner.import('/src-main/http/server.ts')
    service = openService({ dataDir, secrets: new ScratchSecrets() })
    const reseller = service.resellers.create({ name: 'OpenAPI', email: 'openapi@example.test', groupId: 1 })
    const { key } = service.resellers.createApiKey(reseller.id)
    app = await buildServer(service)
    const res = await app.inject({
      method: 'GET',
      url: '/openapi.json',
      headers: { host: '127.0.0.1', 'x-api-key': key }
    })
    if (res.statusCode !== 200) throw new Error(`could not read /openapi.json: HTTP ${res.statusCode} ${res.body}`)
    return JSON.parse(res.body)
  } finally {
    await app?.close()
    service?.close()
    rmSync(dataDir, { recursive: true, force: true })
    await runner.close()
    await vite.close()
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  servedOpenApi()
    .then((doc) => {
      writeFileSync(OPENAPI_FILE, canonicalJson(doc))
      process.stdout.write(`wrote ${OPENAPI_FILE}: ${Object.keys(doc.paths ?? {}).length} paths\n`)
      generateClientTypes(OPENAPI_FILE, CLIENT_SCHEMA_FILE)
      process.stdout.write(`wrote ${CLIENT_SCHEMA_FILE}\n`)
    })
    .catch((err) => {
      process.stderr.write(`docs:openapi: ${err.stack ?? err}\n`)
      process.exit(1)
    })
}
