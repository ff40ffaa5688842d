/**
 * The new order's domain, read the way a browser's address bar reads it (lib/domain-input.ts):
 * what the order will carry is shown under the field as the person types, and the field takes
 * that form when it loses focus. A wildcard on a product that does not cover one is said at once,
 * with the products that do.
 */
import { useState } from 'react'
import type { ProductView } from '../../src-preload/contract'
import { parseDomainInput } from '../lib/domain-input'
import { useStore } from '../store'

export function DomainField({
  product,
  products
}: {
  product: ProductView | null
  products: ProductView[]
}): React.JSX.Element {
  const domain = useStore((s) => s.draft.domain)
  const setDraft = useStore((s) => s.setDraft)
  const [text, setText] = useState(domain)
  const parsed = parseDomainInput(text)
  const wildcardProducts = products.filter((p) => p.type === 'wildcard' && (!product || p.brand === product.brand))
  const wrongWildcard = parsed.wildcard && product !== null && product.type !== 'wildcard'
  const hintId = 'domain-hint'
  return (
    <>
      <label>
        Domain
        <input
          name="domain"
          placeholder={product?.type === 'wildcard' ? '*.example.com' : 'example.com'}
          value={text}
          aria-describedby={hintId}
          aria-invalid={wrongWildcard || undefined}
          onChange={(e) => {
            setText(e.target.value)
            setDraft({ domain: parseDomainInput(e.target.value).ascii })
          }}
          onBlur={() => {
            if (parsed.ascii && parsed.ascii !== text) setText(parsed.ascii)
          }}
          autoComplete="off"
          spellCheck={false}
        />
      </label>
      <div id={hintId} className="small domain-hint" aria-live="polite">
        {parsed.ascii && (parsed.fromUrl || parsed.ascii !== parsed.unicode || parsed.ascii !== text.trim()) ? (
          <p className="muted" data-testid="domain-normalized">
            Ordered as <span className="mono">{parsed.ascii}</span>
            {parsed.ascii !== parsed.unicode ? (
              <>
                {' '}
                (<span data-testid="domain-unicode">{parsed.unicode}</span> in Unicode)
              </>
            ) : null}
            {parsed.fromUrl ? '; the address was reduced to its host name.' : '.'}
          </p>
        ) : null}
        {wrongWildcard ? (
          <p className="warn" role="alert" data-testid="wildcard-message">
            {product.name} covers single names only, not a wildcard such as {parsed.ascii}. Enter the name without
            &ldquo;*.&rdquo; ({parsed.ascii.slice(2)}), or choose a wildcard product
            {wildcardProducts.length > 0 ? ` such as ${wildcardProducts.map((p) => p.name).join(', ')}` : ''}.
          </p>
        ) : null}
      </div>
    </>
  )
}
