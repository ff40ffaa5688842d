// The renderer's start-up script as the window loads it: the entry chunk that index.html names
// and every chunk it imports statically (what must be fetched and parsed before the first
// paint); chunks behind `import()` load later and are not counted. Measured on the built UI in
// out/renderer (electron-vite build). test/app/renderer-bundle.test.ts checks the same limits.
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { gzipSync } from 'node:zlib'
import { ROOT } from './paths.mjs'

export const RENDERER_DIR = join(ROOT, 'out', 'renderer')
/** gzipped bytes the start-up script may have at most. */
export const STARTUP_GZIP_LIMIT = 200 * 1000
/**
 * Minified output has long lines; unminified has about one statement per line (tens of
 * characters). Above this many characters per line the code counts as minified.
 */
export const MINIFIED_CHARS_PER_LINE = 2_000

/**
 * Strings that survive minifying and betray a library: asn1js's decoder error, and the error every
 * pkijs class throws for input that does not fit its schema, or its PKCS#12 content type name. x509 work (CSR and certificate decoding, PKCS#12 export) loads on demand on
 * the screens that need it.
 */
export const HEAVY_MARKERS = {
  asn1js: ['End of input reached before message was fully decoded'],
  pkijs: ["Object's schema was not verified against input data for", 'AuthenticatedSafe']
}

/** The file names of the start-up script, entry first. */
export function startupScripts(dir = RENDERER_DIR) {
  const assets = join(dir, 'assets')
  const html = readFileSync(join(dir, 'index.html'), 'utf8')
  const queue = [...html.matchAll(/<(?:script|link)[^>]+(?:src|href)="\.\/assets\/([^"]+\.js)"/g)].map((m) => m[1])
  const seen = []
  while (queue.length > 0) {
    const file = queue.shift()
    if (seen.includes(file)) continue
    seen.push(file)
    const code = readFileSync(join(assets, file), 'utf8')
    // Static imports only (`import … from "./x.js"`, `import "./x.js"`): `import("./x.js")` loads later.
    for (const m of code.matchAll(/import\s*(?:[\w$*{}\s,]+from\s*)?["'`]\.\/([^"'`]+\.js)["'`]/g)) queue.push(m[1])
  }
  return seen
}

/** Size, minification and the libraries found in the start-up script, and the whole bundle's size. */
export function measureRendererStartup(dir = RENDERER_DIR) {
  const assets = join(dir, 'assets')
  const files = startupScripts(dir)
  const code = files.map((f) => readFileSync(join(assets, f), 'utf8')).join('\n')
  const all = readdirSync(assets)
    .filter((f) => f.endsWith('.js'))
    .map((f) => readFileSync(join(assets, f), 'utf8'))
  const found = (markers, text) => markers.some((m) => text.includes(m))
  const charsPerLine = code.length / code.split('\n').length
  const gzipBytes = gzipSync(code, { level: 9 }).length
  return {
    files,
    bytes: Buffer.byteLength(code),
    gzipBytes,
    charsPerLine: Math.round(charsPerLine),
    minified: charsPerLine > MINIFIED_CHARS_PER_LINE,
    // In the start-up script (must not be) and anywhere in the bundle (shipped as on-demand chunks).
    heavy: Object.fromEntries(
      Object.entries(HEAVY_MARKERS).map(([lib, markers]) => [
        lib,
        { inStartup: found(markers, code), inBundle: all.some((text) => found(markers, text)) }
      ])
    ),
    allChunks: all.length,
    allGzipBytes: all.reduce((n, text) => n + gzipSync(text, { level: 9 }).length, 0),
    withinLimit: gzipBytes <= STARTUP_GZIP_LIMIT
  }
}

export function rendererMarkdown(x) {
  const kb = (b) => (b / 1000).toFixed(1)
  const libs = Object.entries(x.heavy)
  const met = x.minified && x.withinLimit && libs.every(([, v]) => !v.inStartup)
  return [
    '## Renderer start-up script',
    '',
    `The entry chunk of out/renderer/index.html and its static imports (${x.files.length} file(s): ${x.files.join(', ')}).`,
    '',
    '| measure | value | target |',
    '|---|---|---|',
    `| size, gzipped (level 9) | ${kb(x.gzipBytes)} KB (${kb(x.bytes)} KB raw) | ≤ ${kb(STARTUP_GZIP_LIMIT)} KB: ${x.withinLimit ? 'meets' : '**above**'} |`,
    `| minified | ${x.minified ? 'yes' : '**no**'} (${x.charsPerLine} characters per line) | yes |`,
    ...libs.map(
      ([lib, v]) =>
        `| ${lib} in it | ${v.inStartup ? '**yes**' : 'no'} (in an on-demand chunk: ${v.inBundle ? 'yes' : 'no'}) | no |`
    ),
    '',
    `All ${x.allChunks} chunks together: ${kb(x.allGzipBytes)} KB gzipped. ${met ? 'Every target met.' : '**A target is not met.**'}`,
    ''
  ].join('\n')
}
