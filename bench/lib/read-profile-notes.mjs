// What `node --cpu-prof` on `certdesk serve` showed for a cached read under wrk load (GET
// /products, 64 connections, 2 cores), and what was changed; printed under the read table of
// bench/results/latest.md. Shares are of the server's busy samples (idle left out), grouped by
// the first frame of each stack that belongs to one of the parts named.
export const READ_PROFILE_NOTES = `Where a cached read spends its time (\`node --cpu-prof\` on \`certdesk serve\`, GET /products under wrk; share of busy samples):

| part | before: through fastify | after: kept bytes in front of fastify |
|---|---|---|
| socket write of headers and body (node:http, the kernel) | 46% | 77% |
| store-version check (one SQLite read per request) | 19% | 2% (one read per event-loop turn) |
| fastify hooks, request and reply objects | 12% | 4% (first requests of a key only) |
| HTTP parsing (node:http) | 9% | 10% |
| key hashing (SHA-256 of the API key) | 5% | 1% |
| fastify routing | 1% | 0.2% |
| Host check | 0.5% | < 0.1% (verdict kept per Host header) |
| key and answer look-ups (two hash maps) | 0.1% | 0.2% |
| GC, event loop, microtasks | 8% | 6% |

Server CPU per cached GET /products, measured from /proc: 41–49 µs before, 21–27 µs after; bare node:http 17–21 µs.
Changed: a repeated GET is answered by a raw node:http request handler in front of fastify's
(src-main/http/fast-reads.ts) when the Host is accepted, the API key authenticated before and
the kept answer was computed at the caller's current scope versions; anything else goes to
fastify unchanged. The scope versions (an SQLite read transaction: file locks and the WAL index)
are read once per event-loop turn and reused while this process has written nothing
(\`total_changes()\`, no transaction); a write by another process is seen from the next turn.
The key's SHA-256 uses the one-shot \`crypto.hash\`. What is left is node:http's own parsing
and writing, which the bare server pays too.`

// What `node --cpu-prof` on `certdesk serve` showed for POST /orders under wrk (64 connections,
// 2 cores; `npm run bench -- --writes-only --cpu-prof DIR`), and what was changed; printed under
// the write table. Shares are of the server's busy samples, start-up left out, each sample
// counted once in the first part its stack belongs to.
export const WRITE_PROFILE_NOTES = `Where a POST /orders spends its time (\`node --cpu-prof\` on \`certdesk serve\`, 2026-11-26; share of busy samples):

| part | before | after |
|---|---|---|
| SQLite BEGIN IMMEDIATE and COMMIT (the WAL write of every page the order dirtied) | 28% | 37% |
| the order's statements: rows, and the triggers they fire | 22% | 23% |
| fastify's reply, promises and hooks, the event loop | 16% | 14% |
| socket write of the answer | 8% | 8% |
| HTTP parsing, routing, the onRequest hooks | 8% | 5% |
| API key look-up | 6% (scope versions, then the key, two read transactions) | 5% (the key only) |
| response serialisation | 5% (a union: each branch validated first) | 4% |
| body read, JSON parse, validation | 3% | 2% |
| garbage collection | 3% | 2% |
| pricing and the catalogue check | 2% (its own read transaction) | 1% (inside the write transaction) |

Server CPU per POST /orders, from /proc, same machine and load: about 1,860 µs before, 1,120 µs after;
the raw baseline 885 µs. Changed: the order is priced and written in one write transaction
(\`core/orders/orders.ts\`), so the catalogue reads run under its lock rather than opening a read
transaction each; the answer is built from the values the transaction wrote instead of a
read-back join and a second balance read; the body's digest is made only when an
Idempotency-Key is sent; a write looks its key up once and reads no scope versions (only GETs
use them); the answer is serialised by its own branch of the response union. What is left is
mostly SQLite's own work, which the baseline pays as well.`
