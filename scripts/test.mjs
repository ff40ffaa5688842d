// `npm test`: set-up on a fresh machine, then every check CI runs: typecheck, lint, unit and
// API tests (vitest) on SQLite, the same for the core, the HTTP API, the CLI and the ACME server
// again with their books in PostgreSQL, end-to-end tests (Playwright + Debian's Chromium) and
// the short reliability run. Ends with one line "N passed, N failed".
import { spawnSync } from 'node:child_process'
import { existsSync, mkdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { root, setup } from './setup.mjs'

const step = (name) => process.stderr.write(`\n=== ${name}\n`)
const bin = (name) => join(root, 'node_modules', '.bin', name)
const sh = (cmd, args, env = {}) =>
  spawnSync(cmd, args, { cwd: root, stdio: 'inherit', env: { ...process.env, ...env } }).status === 0

let passed = 0
let failed = 0
const failures = []
// The names of failed tests, printed again at the very end: a CI log keeps only its tail.
const failedTests = []

function collectPlaywright(suite, file) {
  for (const spec of suite.specs ?? []) {
    if (!spec.ok) failedTests.push(`${spec.file ?? file}:${spec.line ?? '?'} › ${spec.title}`)
  }
  for (const child of suite.suites ?? []) collectPlaywright(child, suite.file ?? file)
}

/** Adds a run's counts and failed tests; `label` tells the runs of one file apart (the engine). */
function count(file, label = '') {
  if (!existsSync(file)) return false
  const r = JSON.parse(readFileSync(file, 'utf8'))
  if (typeof r.numPassedTests === 'number') {
    passed += r.numPassedTests
    failed += r.numFailedTests
    for (const f of r.testResults ?? []) {
      const name = `${label}${f.name.replace(`${root}/`, '')}`
      const bad = (f.assertionResults ?? []).filter((a) => a.status === 'failed')
      for (const a of bad) failedTests.push(`${name} › ${a.fullName}`)
      if (!bad.length && f.status === 'failed') failedTests.push(`${name}: ${f.message ?? 'failed'}`)
    }
    return true
  }
  if (r.stats) {
    passed += r.stats.expected ?? 0
    failed += (r.stats.unexpected ?? 0) + (r.stats.flaky ?? 0)
    for (const suite of r.suites ?? []) collectPlaywright(suite, suite.file)
    return true
  }
  return false
}

async function main() {
  step('setup')
  await setup()
  const results = join(root, 'test-results')
  mkdirSync(results, { recursive: true })

  step('typecheck')
  if (!sh('npm', ['run', '-s', 'typecheck'])) failures.push('typecheck')
  step('lint')
  if (!sh('npm', ['run', '-s', 'lint'])) failures.push('lint')

  step('unit and API tests (vitest)')
  const vitestJson = join(results, 'vitest.json')
  const vitestOk = sh(bin('vitest'), [
    'run',
    '--reporter=default',
    '--reporter=json',
    `--outputFile.json=${vitestJson}`
  ])
  if (!count(vitestJson) || !vitestOk) failures.push('vitest')

  // The folders whose tests go through the store run once more on PostgreSQL (vitest.config.mts
  // picks them, and leaves out what reaches into the SQLite file); the UI and end-to-end tests
  // run once.
  step('core, HTTP API, CLI and ACME server tests on PostgreSQL (vitest)')
  const postgresJson = join(results, 'vitest-postgres.json')
  const postgresOk = sh(
    bin('vitest'),
    ['run', '--reporter=default', '--reporter=json', `--outputFile.json=${postgresJson}`],
    { CERTDESK_TEST_ENGINE: 'postgres' }
  )
  if (!count(postgresJson, '[postgres] ') || !postgresOk) failures.push('vitest on PostgreSQL')

  if (existsSync(join(root, 'playwright.config.ts'))) {
    step('end-to-end tests (Playwright, Chromium)')
    const pwJson = join(results, 'playwright.json')
    const pwOk = sh(bin('playwright'), ['test'], { PLAYWRIGHT_JSON_OUTPUT_NAME: pwJson })
    if (!count(pwJson) || !pwOk) failures.push('playwright')
  }

  if (existsSync(join(root, 'scripts', 'reliability.mjs'))) {
    step('reliability (short)')
    if (!sh('node', ['scripts/reliability.mjs', '--short'])) failures.push('reliability')
  }

  if (failedTests.length) process.stdout.write(`\nfailed tests:\n${failedTests.map((t) => `  ${t}`).join('\n')}\n`)
  process.stdout.write(`\ntests: ${passed} passed, ${failed} failed\n`)
  if (failures.length) {
    process.stderr.write(`failed steps: ${failures.join(', ')}\n`)
    process.exit(1)
  }
}

main().catch((err) => {
  process.stderr.write(`test: ${err.stack ?? err}\n`)
  process.exit(1)
})
