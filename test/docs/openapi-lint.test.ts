/**
 * docs/openapi.json passes Redocly's recommended rules, and the stricter ones of redocly.yaml
 * (a description on every operation and parameter, examples that match their schemas without
 * extra fields), with no error and no warning. Redocly runs offline: anything it tried to
 * reach off this machine would be refused and fail the test.
 */
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { OFFLINE_MARKER, ROOT, runTool } from '../support/offline-tool'

type Doc = { paths: Record<string, Record<string, Record<string, unknown>>> }

describe('docs/openapi.json under Redocly lint', () => {
  it('has no error and no warning under the recommended rules', async () => {
    const run = await runTool('redocly', ['lint', 'docs/openapi.json', '--config', 'redocly.yaml', '--format', 'json'])
    expect(run.stderr).not.toContain(OFFLINE_MARKER)
    const report = JSON.parse(run.stdout) as {
      totals: { errors: number; warnings: number }
      problems: { ruleId: string; message: string; location: { pointer: string }[] }[]
    }
    const problems = report.problems.map((p) => `${p.ruleId} at ${p.location[0]?.pointer}: ${p.message}`)
    expect(problems).toEqual([])
    expect(report.totals).toMatchObject({ errors: 0, warnings: 0 })
    expect(run.code).toBe(0)
  })

  it('extends the recommended rules and turns none of them off', () => {
    const config = readFileSync(join(ROOT, 'redocly.yaml'), 'utf8')
    expect(config).toMatch(/extends:\s*\n\s*- recommended/)
    // Rules sit indented under `rules:`; `telemetry: off` (top level) keeps Redocly from reporting usage.
    expect(config).not.toMatch(/^\s+[a-z0-9-]+:\s*off\s*$/m)
  })

  it('gives every operation an example answer and every body an example request', () => {
    const doc = JSON.parse(readFileSync(join(ROOT, 'docs', 'openapi.json'), 'utf8')) as Doc
    const missing: string[] = []
    for (const [path, item] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(item)) {
        const where = `${method.toUpperCase()} ${path}`
        const ok = (op.responses as Record<string, { content?: Record<string, { example?: unknown }> }>)['200']
        if (!Object.values(ok.content ?? {}).some((m) => m.example !== undefined)) missing.push(`${where} answer`)
        const body = op.requestBody as { content: Record<string, { example?: unknown }> } | undefined
        if (body && !Object.values(body.content).some((m) => m.example !== undefined)) missing.push(`${where} request`)
      }
    }
    expect(missing).toEqual([])
  })
})
