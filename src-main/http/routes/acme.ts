/**
 * The reseller-API side of ACME subscriptions: GET /orders/{order_id}/acme (spec "ACME
 * subscription details"), the `ais` set-up page its `autoinstall.login_url` points to, and the
 * CertDesk root certificate clients must trust for the HTTPS directory.
 */
import type { FastifyRequest } from 'fastify'
import {
  ACME_ROOT_CA_PATH,
  ACME_SETUP_PREFIX,
  ROOT_CA_FILE,
  type AcmeDetails
} from '../../core/acme-server/acme-subscriptions'
import { clientCommands, shownAcmeUrls, type AcmeUrls } from '../../core/acme-server/client-setup'
import { persistIssuerDomain } from '../../core/acme-server/challenges'
import { DCV_SETTINGS } from '../../core/dcv/dcv'
import { persistRecordViews } from '../../core/dcv/dns-persist-view'
import { ServiceError } from '../../core/errors'
import type { Service } from '../../core/service'
import { caller } from '../auth'
import { acmeDetailsJson } from '../present'
import type { ApiRouter } from '../router'
import { AcmeDetailsResponse, IdParams } from '../schemas'
import { Type } from '@sinclair/typebox'

/** The PEM text of GET /acme/root-ca.pem. */
const RootCertificate = Type.String({
  pattern: '-----BEGIN CERTIFICATE-----',
  description: 'the CertDesk root certificate, PEM'
})

export const SETUP_PREFIX = ACME_SETUP_PREFIX
export const ROOT_CA_PATH = ACME_ROOT_CA_PATH

/**
 * Paths on the local listener that carry no API key: the set-up page is reached through a
 * link holding a random token (kept like the EAB key), and the root certificate is public.
 */
export const isAcmePublicPath = (request: FastifyRequest): boolean => {
  const path = request.url.split('?')[0]
  return request.method === 'GET' && (path === ROOT_CA_PATH || path.startsWith(SETUP_PREFIX))
}

/** The addresses shown: under the public base URL when set, else this listener's as the request named it. */
function urlsFor(service: Service, request: FastifyRequest): Promise<AcmeUrls> {
  return shownAcmeUrls(service.settings, `${request.protocol}://${request.headers.host ?? '127.0.0.1'}`)
}

const escapeHtml = (s: string): string =>
  s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] as string)

function setupPage(d: AcmeDetails, urls: AcmeUrls): string {
  const cmds = clientCommands({
    serverUrl: urls.serverUrl,
    eabKid: d.eabKid,
    eabHmacKey: d.eabHmacKey,
    names: d.domains.map((x) => x.name),
    email: d.contactEmail,
    rootCaPath: ROOT_CA_FILE,
    rootCaUrl: urls.rootCaUrl,
    trust: urls.trust
  })
  const block = (title: string, cmd: string) => `<h2>${escapeHtml(title)}</h2><pre>${escapeHtml(cmd)}</pre>`
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="referrer" content="no-referrer">
<title>CertDesk ACME set-up</title><style>body{font:15px system-ui;max-width:60rem;margin:2rem auto;padding:0 1rem}
pre{background:#f4f4f4;padding:.8rem;white-space:pre-wrap;word-break:break-all}</style></head><body>
<h1>Automatic certificates for ${escapeHtml(d.domains.map((x) => x.name).join(', '))}</h1>
<p>Subscription ${d.id}, ${escapeHtml(d.status)}, ${escapeHtml(d.beginDate)} to ${escapeHtml(d.endDate ?? 'open end')}.
Keep this page private: the HMAC key below binds ACME accounts to the subscription.</p>
<table><tr><th align="left">ACME directory</th><td><code>${escapeHtml(urls.serverUrl)}</code></td></tr>
<tr><th align="left">EAB key id</th><td><code>${escapeHtml(d.eabKid)}</code></td></tr>
<tr><th align="left">EAB HMAC key</th><td><code>${escapeHtml(d.eabHmacKey)}</code></td></tr></table>
<p>First save the CertDesk root the directory's certificate chains to:</p>
<pre>${escapeHtml(cmds.root_ca)}</pre>
${block('certbot', cmds.certbot)}${block('acme.sh', cmds.acme_sh)}${block('lego', cmds.lego)}
</body></html>`
}

export function registerAcmeRoutes(r: ApiRouter, service: Service): void {
  r.get(
    '/orders/:order_id/acme',
    {
      operationId: 'getAcmeSubscription',
      tags: ['ACME subscriptions'],
      summary: 'Show how to set up an ACME subscription',
      description:
        "Everything the customer's ACME client needs: the directory, the External Account Binding key id and HMAC key (a secret, read from the OS keychain for this answer only), the names it may order, ready-to-paste certbot, acme.sh and lego commands, and the dns-persist-01 records. 404 for an order that is not an ACME subscription.",
      params: IdParams('order_id', 'The ACME subscription order.'),
      response: { 200: AcmeDetailsResponse }
    },
    async (request) => {
      const reseller = caller(request)
      await service.orders.get(reseller.id, request.params.order_id)
      const sub = await service.acme.forOrder(reseller.id, request.params.order_id)
      const details = await service.acme.details(sub)
      const urls = await urlsFor(service, request)
      const setup = acmeDetailsJson(details, urls)
      // dns-persist-01: the record each bound account's customer publishes once (read-only look).
      const dnsPersist = await persistRecordViews({
        domains: setup.domains.map((d) => d.name),
        accountUrls: details.accounts.filter((a) => a.status === 'valid').map((a) => urls.accountUrl(a.id)),
        issuerDomain: await persistIssuerDomain(service.settings),
        wildcard: details.wildcard,
        resolver: (await service.settings.get(DCV_SETTINGS.resolver)) || null,
        now: service.ctx.clock()
      })
      return { success: true as const, acme: { ...setup, dns_persist: dnsPersist } }
    }
  )
}

/**
 * The pages a customer opens without an API key, on every listener (the public one too, also
 * without the reseller API): the auto-install set-up page behind its token link, and the root
 * certificate the ACME directory's chain ends in.
 */
export function registerAcmePublicPages(r: ApiRouter, service: Service): void {
  r.get(
    `${SETUP_PREFIX}:token`,
    { hide: true, params: Type.Object({ token: Type.String({ maxLength: 128 }) }) },
    async (request, reply) => {
      const sub = await service.acme.bySetupToken(request.params.token)
      if (!sub)
        throw new ServiceError('not_found', "no ACME set-up page has this link; ask for the order's login_url again")
      const html = setupPage(await service.acme.details(sub), await urlsFor(service, request))
      return reply.type('text/html; charset=utf-8').header('cache-control', 'no-store').send(html)
    }
  )

  r.get(
    ROOT_CA_PATH,
    {
      operationId: 'getRootCertificate',
      tags: ['ACME subscriptions'],
      summary: 'Download the CertDesk root certificate',
      description:
        "The root the ACME directory's HTTPS certificate and every locally issued certificate chain to, as PEM, for a trust store. Public: no API key needed.",
      security: [],
      produces: ['application/x-pem-file'],
      response: { 200: RootCertificate }
    },
    async (_request, reply) => reply.type('application/x-pem-file').send(await service.localCa.rootPem())
  )
}
