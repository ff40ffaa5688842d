/** Manual reissue of a completed order: with the same CSR, or with a new key generated here. */
import type { CertificateView, OrderView } from '../../src-preload/contract'
import { useCan, useStore } from '../store'
import type { RunExport } from './order-downloads'

export function ReissueActions({
  order,
  cert,
  busy,
  run,
  onError
}: {
  order: OrderView
  cert: CertificateView
  busy: string | null
  run: RunExport
  onError(message: string): void
}): React.JSX.Element | null {
  const reissue = useStore((s) => s.reissue)
  const mayReissue = useCan('reissue')
  if (!mayReissue) return null
  return (
    <div className="actions wrap">
      <button
        className="btn"
        disabled={busy !== null}
        onClick={() => void reissue({ orderId: order.id }).then((e) => e && onError(e))}
      >
        Reissue with the same CSR
      </button>
      <button
        className="btn"
        disabled={busy !== null}
        onClick={() =>
          run('Generating a new key and reissuing…', async () => {
            const names = cert.names.length > 0 ? cert.names : [order.domain]
            const { generateCsr } = await import('../lib/csr')
            const g = await generateCsr('ECDSA-P256', names)
            // The key goes with the request: the core keeps it together with the new
            // certificate, before that certificate's deploys look for it.
            const e = await reissue({ orderId: order.id, csr: g.csrPem, privateKeyPem: g.privateKeyPem })
            if (e) throw new Error(e)
          })
        }
      >
        Reissue with a new key (ECDSA P-256)
      </button>
    </div>
  )
}
