import react from '@vitejs/plugin-react'
import { defineConfig } from 'electron-vite'
import { resolve } from 'node:path'

export default defineConfig({
  main: {
    build: {
      outDir: 'out/main',
      rollupOptions: {
        // The Electron entry and the `certdesk` CLI share the core; the CLI runs under plain Node.
        input: { index: resolve(__dirname, 'src-main/index.ts'), cli: resolve(__dirname, 'src-main/cli.ts') }
      }
    }
  },
  preload: {
    build: {
      outDir: 'out/preload',
      rollupOptions: {
        input: { index: resolve(__dirname, 'src-preload/index.ts') },
        // With sandbox: true the preload must be one CommonJS file (style page, "A tiny preload").
        output: { format: 'cjs', entryFileNames: '[name].cjs' }
      }
    }
  },
  renderer: {
    root: resolve(__dirname, 'src-renderer'),
    build: {
      outDir: 'out/renderer',
      rollupOptions: { input: { index: resolve(__dirname, 'src-renderer/index.html') } }
    },
    plugins: [react()]
  }
})
