// Bundles bench/src/core-bench.ts with vite (SQL migrations as text, TypeScript, the same
// resolution as the app build), dependencies left to node_modules. Returns the .mjs path.
import { join } from 'node:path'
import { build } from 'vite'
import { ROOT } from './paths.mjs'

export async function buildCoreBench(outDir) {
  await build({
    root: ROOT,
    configFile: false,
    logLevel: 'error',
    build: {
      ssr: join(ROOT, 'bench', 'src', 'core-bench.ts'),
      outDir,
      emptyOutDir: true,
      target: 'node20',
      rollupOptions: { output: { format: 'es', entryFileNames: 'core-bench.mjs' } }
    }
  })
  return join(outDir, 'core-bench.mjs')
}
