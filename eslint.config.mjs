// Layers are enforced here, not hoped for: the folder a file sits in decides what it may import.
//  - src-main/core is the service. It imports no electron, no fastify and nothing of the
//    transports, the shared transport helpers or the UI, and it takes its clock as a parameter
//    (only time.ts reads the real one). It alone reaches the database: better-sqlite3, pg, the
//    store port and its engines, a context's `store` and `.prepare()` appear nowhere else in
//    src-main, so every query is a core function, whichever engine stands behind it.
//  - src-main/acme (the ACME protocol), src-main/http (the reseller API) and src-main/app (the
//    desktop bridge) are transports over the core: they parse, authenticate, call the core and
//    present. They do not import each other, except that the bridge is served on the reseller
//    API's listener and so uses its server, router, envelope and paging, never its routes. What
//    two transports need alike lives in src-main/common, which imports nothing of src-main.
//  - The entry points (src-main/*.ts) wire the layers together; nothing in src-main imports the
//    renderer, and the renderer imports only the typed bridge of src-preload.
//  - src-shared holds the bridge contract (its method table and record schemas) and the values
//    both sides know. It imports nothing of src-main, src-preload, src-renderer or Node. The
//    renderer takes its types (`import type` only, so no schema code enters its bundle) and
//    the run-time names from src-preload/channels.
import js from '@eslint/js'
import globals from 'globals'
import tseslint from 'typescript-eslint'

const RENDERER = {
  group: ['**/src-renderer/**'],
  message: 'src-main never imports the renderer; it talks to it through src-preload.'
}
const NO_ELECTRON = {
  group: ['electron', 'electron/*'],
  message: 'Only the Electron entry, the IPC bridge and the preload import electron.'
}
const NO_PRELOAD = {
  group: ['**/src-preload/**'],
  message: 'Only the bridge (src-main/app) serves the src-preload contract.'
}
const NO_ACME = { group: ['**/acme/**'], message: 'Only the entry points start the ACME server (src-main/acme).' }
const NO_APP = { group: ['**/app/**'], message: 'The desktop bridge (src-main/app) is wired by the entry points only.' }
const NO_HTTP = {
  group: ['**/http/**'],
  message: 'The reseller API (src-main/http) is no dependency of this layer; common helpers go to src-main/common.'
}

/** The database is the core's alone (types excepted, which carry no connection). */
const DATABASE = [
  { group: ['better-sqlite3', 'pg', 'pg-*'], message: 'Only src-main/core opens the database; call a core function.' },
  {
    // core/store holds the connection, the engines and the store version; what a transport may call
    // there is a core function (the store copy) or a verdict on an error (the storage faults). A
    // regex, as a gitignore pattern cannot re-include a file under a folder it excludes.
    regex: '/core/store(/(?!(store-faults|store-copy)$)[^/]+)?$',
    allowTypeImports: true,
    message: 'Only src-main/core queries the database; call a core function (the store version is ctx.storeVersion()).'
  }
]
const DATABASE_SYNTAX = [
  {
    selector: "MemberExpression[property.name='db']",
    message: 'Only src-main/core touches the database; put the query in a core function.'
  },
  {
    selector: "MemberExpression[object.property.name='ctx'][property.name='store']",
    message: 'Only src-main/core touches the database; put the query in a core function.'
  },
  {
    selector: 'CallExpression[callee.property.name=/^(prepare|pragma|transaction)$/]',
    message: 'SQL lives only in src-main/core; put the query in a core function.'
  }
]

/** `no-restricted-imports` (with type-import exceptions) for the files of one layer. */
const layer = (files, patterns, extra = {}) => ({
  files,
  rules: {
    'no-restricted-imports': 'off',
    '@typescript-eslint/no-restricted-imports': ['error', { patterns }],
    ...extra
  }
})

const outsideCore = { 'no-restricted-syntax': ['error', ...DATABASE_SYNTAX] }

export default tseslint.config(
  // client/schema.ts is generated from docs/openapi.json (npm run docs:openapi).
  {
    ignores: [
      'out/**',
      'dist/**',
      'node_modules/**',
      'test-results/**',
      'playwright-report/**',
      'bench/results/**',
      'client/schema.ts'
    ]
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { ...globals.node } },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports' }]
    }
  },
  layer(
    ['src-main/core/**/*.ts'],
    [
      NO_ELECTRON,
      { group: ['fastify', '@fastify/*'], message: 'src-main/core knows no HTTP; put it in a transport.' },
      {
        group: ['**/src-renderer/**', '**/src-preload/**', '**/http/**', '**/app/**', '**/acme/**', '**/common/**'],
        message: 'src-main/core imports nothing from the transports or the UI.'
      }
    ],
    { 'no-restricted-properties': ['error', { object: 'Date', property: 'now', message: 'Use the injected Clock.' }] }
  ),
  layer(['src-main/acme/**/*.ts'], [RENDERER, NO_ELECTRON, NO_PRELOAD, NO_HTTP, NO_APP, ...DATABASE], outsideCore),
  layer(['src-main/http/**/*.ts'], [RENDERER, NO_ELECTRON, NO_PRELOAD, NO_ACME, NO_APP, ...DATABASE], outsideCore),
  layer(
    ['src-main/app/**/*.ts'],
    [
      RENDERER,
      NO_ACME,
      {
        group: ['**/http/*', '!**/http/server', '!**/http/router', '!**/http/errors', '!**/http/paging'],
        message:
          'The bridge uses only the listener it is served on (http/server, router, errors, paging), never the reseller API routes.'
      },
      ...DATABASE
    ],
    outsideCore
  ),
  layer(
    ['src-main/common/**/*.ts'],
    [{ group: ['../*', 'electron', 'fastify'], message: 'src-main/common serves every layer and imports none.' }],
    outsideCore
  ),
  layer(['src-main/*.ts'], [RENDERER, ...DATABASE], outsideCore),
  {
    files: ['src-renderer/**/*.{ts,tsx}'],
    languageOptions: { globals: { ...globals.browser } },
    rules: {
      'no-restricted-imports': 'off',
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['**/src-main/**', 'electron', 'node:*', 'fs', 'path', 'child_process'],
              message: 'The renderer sees only the typed bridge (src-preload).'
            },
            {
              group: [
                '**/src-preload/*',
                '!**/src-preload/contract',
                '!**/src-preload/channels',
                '!**/src-preload/rpc-client'
              ],
              message:
                'Import only the contract, its run-time names (channels) and its browser-mode client from src-preload.'
            },
            {
              group: ['**/src-preload/contract', '**/src-shared/**'],
              allowTypeImports: true,
              message:
                'The renderer takes the contract and the shared records as types only (`import type`): their schemas stay out of its bundle; run-time names come from src-preload/channels.'
            },
            {
              group: ['@sinclair/typebox', '@sinclair/typebox/*', 'ajv', 'ajv/*'],
              message: 'Arguments are checked in main; no validator enters the renderer bundle.'
            },
            {
              group: ['pkijs', 'asn1js'],
              message:
                'PKCS#12 and encrypted keys are built in the main process (src-main/core/deploy/pfx.ts); ask the bridge for the file.'
            }
          ]
        }
      ]
    }
  },
  layer(
    ['src-shared/**/*.ts'],
    [
      {
        group: [
          '**/src-main/**',
          '**/src-preload/**',
          '**/src-renderer/**',
          'electron',
          'electron/*',
          'node:*',
          'fs',
          'path',
          'crypto',
          'child_process',
          'os'
        ],
        message:
          'src-shared is read by main and the renderer alike: it imports nothing of src-main, src-preload, src-renderer or Node.'
      }
    ],
    outsideCore
  ),
  {
    files: ['src-preload/channels.ts', 'src-preload/rpc-client.ts'],
    rules: {
      'no-restricted-imports': 'off',
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['**/src-shared/*', '!**/src-shared/constants'],
              allowTypeImports: true,
              message:
                'What the renderer bundles takes the contract as types only; values come from src-shared/constants.'
            },
            {
              group: ['@sinclair/typebox', '@sinclair/typebox/*', 'ajv', 'ajv/*'],
              message: 'No validator enters the renderer bundle.'
            }
          ]
        }
      ]
    }
  },
  {
    files: ['scripts/**/*.mjs', 'bin/**/*.cjs'],
    rules: { '@typescript-eslint/no-require-imports': 'off' }
  },
  // Every store call returns a promise: one not awaited runs after its caller has moved on (a
  // write after the answer, a read after the store closed), and TypeScript accepts an async
  // function where a callback returns void. The type checker finds both.
  {
    files: ['src-main/**/*.ts', 'test/**/*.ts'],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/await-thenable': 'error'
    }
  }
)
