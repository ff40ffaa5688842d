/**
 * The typed contract between the UI and the main process. One interface; the IPC handler
 * table, the preload object and the browser-mode client are all derived from it.
 */
export interface AppApi {
  /** Where the reseller API listens, for the UI's "API & integrations" page. */
  apiInfo(): Promise<{ baseUrl: string; version: string }>
}

export type AppMethod = keyof AppApi
