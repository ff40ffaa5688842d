// Layers are enforced here, not hoped for (style page, "Layers you can see in the path"):
// src-main/core imports no electron, no fastify and nothing of the UI; the renderer imports
// only src-preload types.
import js from '@eslint/js'
import globals from 'globals'
import tseslint from 'typescript-eslint'

export default tseslint.config(
  { ignores: ['out/**', 'dist/**', 'node_modules/**', 'test-results/**', 'playwright-report/**', 'bench/results/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { ...globals.node } },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports' }]
    }
  },
  {
    files: ['src-main/core/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            { group: ['electron', 'electron/*'], message: 'src-main/core runs without Electron.' },
            { group: ['fastify', '@fastify/*'], message: 'src-main/core knows no HTTP; put it in src-main/http.' },
            { group: ['**/src-renderer/**', '**/http/**', '**/app/**'], message: 'src-main/core imports nothing from the transports or the UI.' }
          ]
        }
      ],
      // The core takes its clock as a parameter (design page); only time.ts reads the real one.
      'no-restricted-properties': ['error', { object: 'Date', property: 'now', message: 'Use the injected Clock.' }]
    }
  },
  {
    files: ['src-renderer/**/*.{ts,tsx}'],
    languageOptions: { globals: { ...globals.browser } },
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            { group: ['**/src-main/**', 'electron', 'node:*', 'fs', 'path', 'child_process'], message: 'The renderer sees only the typed bridge (src-preload).' },
            { group: ['**/src-preload/*', '!**/src-preload/contract', '!**/src-preload/rpc-client'], message: 'Import only the contract and its browser-mode client from src-preload.' }
          ]
        }
      ]
    }
  },
  {
    files: ['scripts/**/*.mjs', 'bin/**/*.cjs'],
    rules: { '@typescript-eslint/no-require-imports': 'off' }
  }
)
