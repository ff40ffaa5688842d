/**
 * The layer rules of eslint.config.mjs, run on small probe files placed (virtually) in each
 * folder: only src-main/core reaches the database, the transports (acme, http, app) import the
 * core and src-main/common but not each other, and nothing in src-main imports the renderer.
 */
import { ESLint } from 'eslint'
import { beforeAll, describe, expect, it } from 'vitest'

let eslint: ESLint

beforeAll(() => {
  // The probe files exist only here, outside the TypeScript project: the rules that need the
  // type checker (floating promises) are not what this test is about.
  eslint = new ESLint({
    cwd: process.cwd(),
    overrideConfig: {
      languageOptions: { parserOptions: { projectService: false } },
      rules: {
        '@typescript-eslint/no-floating-promises': 'off',
        '@typescript-eslint/no-misused-promises': 'off',
        '@typescript-eslint/await-thenable': 'off'
      }
    }
  })
})

/** The rule messages a probe file at `filePath` gets (unused-variable noise aside). */
async function problems(filePath: string, code: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath })
  return result.messages
    .filter((m) => m.ruleId !== '@typescript-eslint/no-unused-vars')
    .map((m) => `${m.line}: ${m.message}`)
}

describe('layer rules', () => {
  it('keeps the database inside src-main/core', async () => {
    const code = [
      "import Database from 'better-sqlite3'",
      "import { openDatabase, type Db } from '../core/store/db'",
      "import type { Service } from '../core/service'",
      "export const probe = (s: Service, d: Db): unknown => [Database, openDatabase, s.ctx.db.prepare('SELECT 1')]",
      "import { openStore } from '../core/store'",
      "export const port = (s: Service): unknown => [openStore, s.ctx.store.all('SELECT 1')]",
      ''
    ].join('\n')
    for (const file of ['src-main/acme/probe.ts', 'src-main/http/probe.ts', 'src-main/app/probe.ts']) {
      const found = await problems(file, code)
      expect(found.filter((m) => m.startsWith('1: ') && /Only src-main\/core opens the database/.test(m))).toHaveLength(
        1
      )
      expect(
        found.filter((m) => m.startsWith('2: ') && /Only src-main\/core queries the database/.test(m))
      ).toHaveLength(1)
      expect(
        found.filter((m) => m.startsWith('4: ') && /Only src-main\/core touches the database/.test(m))
      ).toHaveLength(1)
      expect(found.filter((m) => m.startsWith('4: ') && /SQL lives only in src-main\/core/.test(m))).toHaveLength(1)
      // The store port and its engines, and the context's store.
      expect(
        found.filter((m) => m.startsWith('5: ') && /Only src-main\/core queries the database/.test(m))
      ).toHaveLength(1)
      expect(
        found.filter((m) => m.startsWith('6: ') && /Only src-main\/core touches the database/.test(m))
      ).toHaveLength(1)
    }
    const entry = await problems('src-main/probe.ts', code.replaceAll('../core/', './core/'))
    expect(entry.length).toBeGreaterThanOrEqual(4)
    // The core itself may.
    expect(await problems('src-main/core/probe.ts', code.replaceAll('../core/', './'))).toEqual([])
  })

  it('lets a transport name the Db type, which carries no connection', async () => {
    const code = "import type { Db } from '../core/store/db'\nexport type Probe = Db\n"
    expect(await problems('src-main/acme/probe.ts', code)).toEqual([])
  })

  it('keeps the transports apart, sharing only src-main/common and the listener the bridge runs on', async () => {
    const acme = await problems(
      'src-main/acme/probe.ts',
      "import { installAuth } from '../http/auth'\nimport { createHandlers } from '../app/handlers'\nimport { hostName } from '../common/host-header'\nexport const p = [installAuth, createHandlers, hostName]\n"
    )
    expect(acme.map((m) => m.slice(0, 2))).toEqual(['1:', '2:'])
    const http = await problems(
      'src-main/http/probe.ts',
      "import { startAcmeServer } from '../acme/server'\nimport { createHandlers } from '../app/handlers'\nimport { hostName } from '../common/host-header'\nexport const p = [startAcmeServer, createHandlers, hostName]\n"
    )
    expect(http.map((m) => m.slice(0, 2))).toEqual(['1:', '2:'])
    const app = await problems(
      'src-main/app/probe.ts',
      "import { registerOrderRoutes } from '../http/routes/orders'\nimport { installAuth } from '../http/auth'\nimport { startAcmeServer } from '../acme/server'\nimport { failure } from '../http/errors'\nimport { API_VERSION } from '../http/server'\nexport const p = [registerOrderRoutes, installAuth, startAcmeServer, failure, API_VERSION]\n"
    )
    expect(app.map((m) => m.slice(0, 2))).toEqual(['1:', '2:', '3:'])
    expect(app[0]).toMatch(/never the reseller API routes/)
    const common = await problems(
      'src-main/common/probe.ts',
      "import { ServiceError } from '../core/errors'\nexport const p = ServiceError\n"
    )
    expect(common).toHaveLength(1)
    const core = await problems(
      'src-main/core/probe.ts',
      "import { startAcmeServer } from '../acme/server'\nimport { hostName } from '../common/host-header'\nexport const p = [startAcmeServer, hostName]\n"
    )
    expect(core.map((m) => m.slice(0, 2))).toEqual(['1:', '2:'])
  })

  it('lets nothing in src-main import the renderer', async () => {
    for (const file of [
      'src-main/probe.ts',
      'src-main/acme/probe.ts',
      'src-main/http/probe.ts',
      'src-main/app/probe.ts'
    ]) {
      const found = await problems(file, "import { App } from '../../src-renderer/app'\nexport const p = App\n")
      expect(found).toHaveLength(1)
      expect(found[0]).toMatch(/src-main never imports the renderer|nothing from the transports or the UI/)
    }
  })

  it('lets the renderer take the contract and the shared records as types only', async () => {
    const found = await problems(
      'src-renderer/screens/probe.tsx',
      [
        "import type { OrderView } from '../../src-preload/contract'",
        "import type { Order } from '../../src-shared/records'",
        "import { HMAC_KEY_PLACEHOLDER } from '../../src-preload/channels'",
        "import { APP_METHODS } from '../../src-preload/contract'",
        "import { OrderView as Schema } from '../../src-shared/records'",
        "import { Type } from '@sinclair/typebox'",
        'export const p: unknown[] = [HMAC_KEY_PLACEHOLDER, APP_METHODS, Schema, Type]',
        'export type P = OrderView | Order',
        ''
      ].join('\n')
    )
    expect(found.map((m) => m.slice(0, 2))).toEqual(['4:', '5:', '6:'])
    expect(found[0]).toMatch(/as types only/)
  })

  it('keeps src-shared free of main, preload, renderer and Node', async () => {
    const found = await problems(
      'src-shared/probe.ts',
      [
        "import { Type } from '@sinclair/typebox'",
        "import { ORDER_STATUSES } from './constants'",
        "import { createHash } from 'node:crypto'",
        "import type { Service } from '../src-main/core/service'",
        "import { bridge } from '../src-renderer/bridge'",
        "import { unwrap } from '../src-preload/channels'",
        'export const p: unknown[] = [Type, ORDER_STATUSES, createHash, bridge, unwrap]',
        'export type P = Service',
        ''
      ].join('\n')
    )
    expect(found.map((m) => m.slice(0, 2))).toEqual(['3:', '4:', '5:', '6:'])
  })
})
