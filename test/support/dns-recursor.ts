/**
 * A stand-in for the recursive resolver a CA's validation uses: it asks the customer's DNS
 * (pebble-challtestsrv) and, when the answer is a CNAME into the zone delegated to CertDesk,
 * follows it to CertDesk's responder, returning the chain as a recursive resolver does (RFC
 * 1034 §4.3.2). Pebble's Go resolver does not chase CNAMEs itself, and CertDesk's responder
 * refuses names outside its zone, so without this step no dns-01 through delegation could pass.
 * UDP only, on loopback; `close()` stops it.
 */
import { createSocket, type RemoteInfo } from 'node:dgram'
import dnsPacket, { type Answer, type Packet } from 'dns-packet'

function ask(server: string, name: string, type: string): Promise<Packet> {
  const [host, port] = [server.slice(0, server.lastIndexOf(':')), Number(server.slice(server.lastIndexOf(':') + 1))]
  return new Promise((resolve, reject) => {
    const s = createSocket('udp4')
    const timer = setTimeout(() => {
      s.close()
      reject(new Error(`no answer from ${server}`))
    }, 2000)
    s.on('message', (m) => {
      clearTimeout(timer)
      s.close()
      resolve(dnsPacket.decode(m))
    })
    s.send(dnsPacket.encode({ type: 'query', id: 7, questions: [{ type: type as 'TXT', name }] }), port, host)
  })
}

export interface Recursor {
  address: string
  /** Names whose CNAME was followed into the delegated zone. */
  followed: string[]
  close(): Promise<void>
}

export async function startRecursor(opts: { customer: string; delegated: string; zone: string }): Promise<Recursor> {
  const followed: string[] = []
  const sock = createSocket('udp4')
  sock.on('message', (msg: Buffer, from: RemoteInfo) => {
    void (async () => {
      const q = dnsPacket.decode(msg)
      const question = q.questions?.[0]
      if (!question) return
      let answers: Answer[] = []
      let rcode: number
      try {
        const first = await ask(opts.customer, question.name, question.type)
        const cname = first.answers?.find((a) => a.type === 'CNAME') as { data: string; name: string } | undefined
        const target = cname?.data.replace(/\.$/, '').toLowerCase()
        if (cname && target && (target === opts.zone || target.endsWith(`.${opts.zone}`))) {
          followed.push(question.name)
          const second = await ask(opts.delegated, target, question.type)
          answers = [first.answers?.find((a) => a.type === 'CNAME') as Answer, ...(second.answers ?? [])]
          rcode = (second as { flags?: number }).flags ? (second as { flags: number }).flags & 0xf : 0
        } else {
          answers = first.answers ?? []
          rcode = ((first as { flags?: number }).flags ?? 0) & 0xf
        }
      } catch {
        rcode = 2
      }
      const out = dnsPacket.encode({
        type: 'response',
        id: q.id,
        flags: dnsPacket.RECURSION_DESIRED | dnsPacket.RECURSION_AVAILABLE | rcode,
        questions: q.questions,
        answers
      })
      sock.send(out, from.port, from.address)
    })()
  })
  await new Promise<void>((resolve) => sock.bind(0, '127.0.0.1', () => resolve()))
  return {
    address: `127.0.0.1:${sock.address().port}`,
    followed,
    close: () => new Promise<void>((resolve) => sock.close(() => resolve()))
  }
}
