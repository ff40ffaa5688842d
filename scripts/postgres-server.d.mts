import type pg from 'pg'

export const PG_BIN: string
export const PG_USER: string
export interface PostgresServerInfo {
  socketDir: string
  port: number
  password: string
}
export interface PostgresServer {
  info: PostgresServerInfo
  pid: number
  socketUrl(database: string): string
  tcpUrl(database: string): string
  query(sql: string, database?: string): Promise<pg.QueryResult>
  stop(): Promise<void>
}
export function startPostgresServer(opts?: { settings?: Record<string, string> }): Promise<PostgresServer>
export function adminConfig(info: PostgresServerInfo, database: string): pg.ClientConfig
