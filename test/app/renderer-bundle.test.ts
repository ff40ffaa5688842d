/**
 * The renderer takes the bridge contract as types only: the built UI (out/renderer, from
 * `electron-vite build`) carries no schema library and none of the contract's schemas, which
 * stay in main where the arguments are checked.
 */
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { gzipSync } from 'node:zlib'
import { describe, expect, it } from 'vitest'

const ASSETS = join(__dirname, '..', '..', 'out', 'renderer', 'assets')

describe('the renderer bundle', () => {
  it('holds no validator and no contract schema', () => {
    const scripts = readdirSync(ASSETS).filter((f) => f.endsWith('.js'))
    expect(scripts.length).toBeGreaterThan(0)
    const code = scripts.map((f) => readFileSync(join(ASSETS, f), 'utf8')).join('\n')
    // TypeBox marks every schema with Symbol.for('TypeBox.Kind'); minifying keeps the string.
    expect(code).not.toMatch(/TypeBox|typebox|TypeCompiler/)
    // The refusal texts of the contract's schemas (src-shared/records.ts) live only in main.
    expect(code).not.toContain('must be a positive whole number')
    expect(code).not.toContain('must be a whole number of cents')
    // The run-time names it does need are there.
    expect(code).toContain('listProducts')
  })
})

/** The scripts the window runs before its first paint: index.html's and what they import statically. */
function startupScripts(): string[] {
  const html = readFileSync(join(ASSETS, '..', 'index.html'), 'utf8')
  const queue = [...html.matchAll(/<(?:script|link)[^>]+(?:src|href)="\.\/assets\/([^"]+\.js)"/g)].map((m) => m[1])
  const seen = new Set<string>()
  while (queue.length > 0) {
    const file = queue.pop() as string
    if (seen.has(file)) continue
    seen.add(file)
    const code = readFileSync(join(ASSETS, file), 'utf8')
    // Static imports only (`import … from "./x.js"`, `import "./x.js"`): `import("./x.js")` loads later.
    for (const m of code.matchAll(/import\s*(?:[\w$*{}\s,]+from\s*)?["'`]\.\/([^"'`]+\.js)["'`]/g)) queue.push(m[1])
  }
  return [...seen]
}

describe('the renderer start-up script', () => {
  const files = startupScripts()
  const code = files.map((f) => readFileSync(join(ASSETS, f), 'utf8')).join('\n')

  it('is minified and at most 200 KB gzipped', () => {
    expect(files.length).toBeGreaterThan(0)
    const lines = code.split('\n').length
    // Unminified output has a line per statement (tens of characters on average).
    expect(code.length / lines).toBeGreaterThan(2_000)
    expect(gzipSync(code).length).toBeLessThanOrEqual(200 * 1000)
  })

  it('carries no ASN.1 or PKCS#12 code: x509 loads only on the screens that decode or make one', () => {
    // asn1js's decoder error and pkijs/asn1-pfx's PKCS#12 content type name survive minifying.
    expect(code).not.toContain('End of input reached before message was fully decoded')
    expect(code).not.toContain('AuthenticatedSafe')
    // Every pkijs class throws this for input that does not fit its ASN.1 schema.
    expect(code).not.toContain("Object's schema was not verified against input data for")
    const all = readdirSync(ASSETS)
      .filter((f) => f.endsWith('.js'))
      .map((f) => readFileSync(join(ASSETS, f), 'utf8'))
      .join('\n')
    // Still shipped, as a chunk loaded on demand.
    expect(all).toContain('End of input reached before message was fully decoded')
  })
})
