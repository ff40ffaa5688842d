import react from '@vitejs/plugin-react'
import { defineConfig } from 'electron-vite'
import { resolve } from 'node:path'

export default defineConfig({
  main: {
    build: {
      outDir: 'out/main',
      rollupOptions: {
        // The Electron entry and the `certdesk` CLI share the core; the CLI runs under plain Node.
        input: { index: resolve(__dirname, 'src-main/index.ts'), cli: resolve(__dirname, 'src-main/cli.ts') },
        // Shared code goes into chunks beside the entries, not in a subfolder, so `__dirname` is
        // out/main in every module and paths such as the UI folder (../renderer) hold everywhere.
        output: { chunkFileNames: '[name]-[hash].js' }
      }
    }
  },
  preload: {
    build: {
      outDir: 'out/preload',
      rollupOptions: {
        input: { index: resolve(__dirname, 'src-preload/index.ts') },
        // With sandbox: true, Electron loads a preload as one CommonJS file without require() of
        // other files, so it is built as a single .cjs.
        output: { format: 'cjs', entryFileNames: '[name].cjs' }
      }
    }
  },
  renderer: {
    root: resolve(__dirname, 'src-renderer'),
    build: {
      outDir: 'out/renderer',
      // Minified: the window parses all of the start-up script before its first paint.
      minify: true,
      rollupOptions: { input: { index: resolve(__dirname, 'src-renderer/index.html') } }
    },
    plugins: [react()]
  }
})
