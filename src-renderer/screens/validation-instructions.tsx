/**
 * What the domain owner must publish, in the form people use it: the validation file to
 * download and upload as it is (HTTP/HTTPS, BR §3.2.2.4.18 "Agreed-Upon Change to Website v2"),
 * the DNS record as name, type and value to paste into a DNS panel (BR §3.2.2.4.7), and the way
 * out of a validation that cannot pass.
 */
import { useState } from 'react'
import type { NameValidationView, OrderView } from '../../src-preload/contract'
import { download } from '../lib/format'
import { useStore } from '../store'
import { CopyButton, ErrorBox } from '../ui'

type Http = Extract<NameValidationView['instructions'], { fileName: string }>
type Dns = Extract<NameValidationView['instructions'], { recordName: string }>

export function HttpInstructions({ name, instructions: i }: { name: string; instructions: Http }): React.JSX.Element {
  return (
    <>
      <ol className="steps small">
        <li>
          Download the validation file <span className="mono">{i.fileName}</span>.
        </li>
        <li>
          Upload it unchanged so that it opens at the URL below over {i.method.toUpperCase()}. No redirect to another
          host, no login page in front of it.
        </li>
        <li>Press &ldquo;Re-check now&rdquo;.</li>
      </ol>
      <div className="actions">
        <button
          type="button"
          className="btn primary small"
          aria-label={`Download validation file for ${name}`}
          onClick={() => download(i.fileName, i.fileContent, 'text/plain')}
        >
          Download validation file
        </button>
      </div>
      <dl className="facts compact">
        <dt>URL</dt>
        <dd className="mono break">
          <span data-testid="dcv-url">{i.url}</span> <CopyButton text={i.url} label="Copy URL" />
        </dd>
        <dt>File content</dt>
        <dd>
          <pre className="mono pre" data-testid="dcv-content">
            {i.fileContent}
          </pre>
          <CopyButton text={i.fileContent} label="Copy content" />
        </dd>
      </dl>
    </>
  )
}

/** One record, as a DNS panel asks for it: the name, the type, the value, each with its own copy. */
function RecordTable({
  name,
  type,
  value,
  testId
}: {
  name: string
  type: string
  value: string
  testId: string
}): React.JSX.Element {
  return (
    <table className="table dns-record" data-testid={testId}>
      <thead>
        <tr>
          <th scope="col">Name</th>
          <th scope="col">Type</th>
          <th scope="col">Value</th>
        </tr>
      </thead>
      <tbody>
        <tr>
          <td className="mono break">
            <span data-testid="dns-name">{name}</span> <CopyButton text={name} label="Copy name" />
          </td>
          <td className="mono" data-testid="dns-type">
            {type}
          </td>
          <td className="mono break">
            <span data-testid="dns-value">{value}</span> <CopyButton text={value} label="Copy value" />
          </td>
        </tr>
      </tbody>
    </table>
  )
}

export function DnsInstructions({ name, instructions: i }: { name: string; instructions: Dns }): React.JSX.Element {
  return (
    <>
      <p className="small">
        Add this record to the DNS zone of <span className="strong">{name}</span>, then press &ldquo;Re-check
        now&rdquo;.
      </p>
      <RecordTable name={i.recordName} type={i.recordType} value={i.recordValue} testId="dns-record" />
      {i.recordType === 'CNAME' && i.txtAlternative ? (
        <>
          <p className="muted small">Where a CNAME cannot be added at that name, a TXT record works as well:</p>
          <RecordTable name={i.recordName} type="TXT" value={i.txtAlternative} testId="dns-record-txt" />
        </>
      ) : null}
    </>
  )
}

/** While names wait: drop the CSR and checks, so the order takes another CSR (or can be cancelled). */
export function CancelValidation({ order }: { order: OrderView }): React.JSX.Element {
  const cancel = useStore((s) => s.cancelValidation)
  const [confirming, setConfirming] = useState(false)
  const [error, setError] = useState<string | null>(null)
  return (
    <div className="cancel-validation">
      {confirming ? (
        <div className="confirm" role="group" aria-label="Cancel validation">
          <p>
            Cancel the validation of {order.orderNumber}? Its CSR and the validation files and records are dropped; the
            order waits for a new CSR, and can then be cancelled with a refund.
          </p>
          <button
            type="button"
            className="btn danger"
            onClick={() =>
              void cancel(order.id).then((e) => {
                setError(e)
                setConfirming(false)
              })
            }
          >
            Yes, cancel the validation
          </button>{' '}
          <button type="button" className="btn" onClick={() => setConfirming(false)}>
            Keep validating
          </button>
        </div>
      ) : (
        <button type="button" className="btn danger" onClick={() => setConfirming(true)}>
          Cancel validation
        </button>
      )}
      <ErrorBox text={error} />
    </div>
  )
}
