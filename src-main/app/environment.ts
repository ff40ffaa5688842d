/** What the process that serves the bridge tells its handlers about itself. */
import type { TeamConnection } from './team-client'

export interface AppEnvironment {
  transport: 'electron' | 'browser'
  /** The reseller API's base URL, once the listener runs. */
  listenerUrl: () => string
  apiVersion: string
  /** The desktop app's save dialog for a CSV export; without it the UI edits a suggested path. */
  chooseSavePath?: (suggestedName: string) => Promise<string | null>
  /** This process signs admins in with their accounts: it serves a team's book. */
  accounts?: boolean
  /** The name a team's book is shown by; the listener's host when not given. */
  bookName?: () => string
  /**
   * The desktop app's link to a team server, where the process may be a client of one (the
   * window, the desktop's browser mode); never on a process that signs admins in itself.
   */
  team?: TeamConnection
}
