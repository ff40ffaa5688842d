/**
 * The renderer takes the bridge contract as types only: the built UI (out/renderer, from
 * `electron-vite build`) carries no schema library and none of the contract's schemas, which
 * stay in main where the arguments are checked.
 */
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
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
