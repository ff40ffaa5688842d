import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..')
/** Spawned directly with node (not through npx), so a kill -9 reaches the server itself. */
export const CLI = join(ROOT, 'bin', 'certdesk.cjs')
