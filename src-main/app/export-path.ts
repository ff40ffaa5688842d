/**
 * Where browser mode suggests writing an export: the page cannot show a native save dialog for
 * a file the main process writes, so the user edits this path (docs/decisions.md, "CSV exports").
 * The user's Downloads folder when there is one, else the home folder; a name not taken yet.
 */
import { existsSync, statSync } from 'node:fs'
import { homedir } from 'node:os'
import { join } from 'node:path'

export function suggestExportPath(name: string, home = homedir()): string {
  const downloads = join(home, 'Downloads')
  const dir = existsSync(downloads) && statSync(downloads).isDirectory() ? downloads : home
  const stem = name.replace(/\.csv$/i, '')
  for (let n = 1; ; n++) {
    const candidate = join(dir, n === 1 ? name : `${stem}-${n}.csv`)
    if (!existsSync(candidate)) return candidate
  }
}
