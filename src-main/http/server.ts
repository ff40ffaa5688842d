/**
 * The local HTTP listener: the reseller API v3.0 over the core service. Binds 127.0.0.1 by
 * default, refuses foreign Host headers (DNS rebinding), authenticates every request, and
 * answers every failure in the spec's envelope (reseller API v3.0, "General response envelope").
 */
import swagger from '@fastify/swagger'
import type { Static } from '@sinclair/typebox'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { ServerOptions as HttpsServerOptions } from 'node:https'
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyServerOptions } from 'fastify'
import type { CreatedOrder } from '../core/orders/orders'
import type { Reseller } from '../core/billing/resellers'
import type { Service } from '../core/service'
import { envelopeRefusal, hostPolicyOf, installAuth, type AuthOptions } from './auth'
import { installRateLimit, RateLimiter, type RateLimit } from './rate-limit'
import {
  clientErrorHandler,
  failure,
  frameworkErrors,
  installErrorHandling,
  logSerializers,
  refuseConnect
} from './errors'
import { installFastReads } from './fast-reads'
import { installReadCache } from './read-cache'
import { ApiRouter } from './router'
import { registerAccountRoutes } from './routes/account'
import { isAcmePublicPath, registerAcmePublicPages, registerAcmeRoutes } from './routes/acme'
import { registerBillingRoutes } from './routes/billing'
import { registerCatalogueRoutes } from './routes/catalogue'
import { registerCertificateRoutes } from './routes/certificates'
import { isCrlPath, registerCrlRoutes } from './routes/crl'
import { registerEventRoutes } from './routes/events'
import { registerInstallationRoutes } from './routes/installations'
import { registerRenewalRoutes } from './routes/renewal'
import { registerOrderRoutes } from './routes/orders'
import { swaggerOptions } from './openapi/document'
import { OpenApiDocument } from './schemas'
import { installValidators } from './validators'

declare module 'fastify' {
  interface FastifyRequest {
    reseller: Reseller | null
  }
}

export type App = FastifyInstance

/** Design page: a body over 1 MiB is 413. */
export const BODY_LIMIT = 1024 * 1024

export interface ServerOptions extends AuthOptions {
  logger?: FastifyServerOptions['logger']
  /** Serve over TLS with this key and chain (and these TLS settings); plain HTTP without. */
  https?: HttpsServerOptions
  /**
   * Whether the reseller API's routes are served (true by default). Without them the listener
   * serves only what `extend` adds and the public ACME pages (the root certificate, the set-up page).
   */
  resellerApi?: boolean
  /** Requests per client address, checked before anything else; none by default (loopback). */
  rateLimit?: RateLimit
  /** Extra routes (the app's RPC and UI, the ACME server) added before the 405 table is built. */
  extend?: (app: App, router: ApiRouter) => void | Promise<void>
  /**
   * On a store other nodes share, move this server's kept answers forward for the orders they
   * place (read-cache.ts); on unless false (a server that must rebuild every answer it sends).
   */
  followOtherNodes?: boolean
}

export const API_VERSION = '3.0'

export async function buildServer(service: Service, opts: ServerOptions = {}): Promise<App> {
  const resellerApi = opts.resellerApi ?? true
  // fastify types an https instance apart from an http one; both are served by the same code here.
  const app = Fastify({
    // https.createServer takes the http options too; fastify passes only these to it.
    ...(opts.https ? { https: { ...opts.https, requireHostHeader: false } } : {}),
    logger:
      opts.logger && typeof opts.logger === 'object'
        ? { serializers: logSerializers, ...opts.logger }
        : (opts.logger ?? false),
    bodyLimit: BODY_LIMIT,
    return503OnClosing: true,
    forceCloseConnections: true,
    ajv: { customOptions: { coerceTypes: true } },
    // A request without Host reaches the Host check below (403 in the envelope), not node's bare 400.
    http: { requireHostHeader: false },
    clientErrorHandler,
    frameworkErrors
  }) as unknown as App
  app.server.on('connect', refuseConnect)
  installValidators(app)
  installErrorHandling(app)
  // Only JSON bodies: anything else is 415, not a string the schema then refuses.
  app.removeContentTypeParser('text/plain')
  app.decorateRequest('reseller', null)
  const limiter = opts.rateLimit ? new RateLimiter(opts.rateLimit) : null
  if (limiter) installRateLimit(app, limiter, opts.refuse ?? envelopeRefusal)
  const keys = installAuth(app, service, {
    ...opts,
    ownAuth: (request) => isAcmePublicPath(request) || isCrlPath(request) || (opts.ownAuth?.(request) ?? false)
  })
  // Repeated GETs answered from kept bytes in front of fastify, under the same rules (fast-reads.ts).
  const kept = installReadCache(app, service)
  const turn = installFastReads(app, service, keys, kept, hostPolicyOf(opts), limiter)
  app.decorate(
    'orderPlaced',
    async (reply: FastifyReply, resellerId: number, created: CreatedOrder, writesBefore: number) => {
      if (!created.moved) return
      keys.orderPlaced(resellerId, created.moved, created.newBalance)
      turn.orderPlaced(resellerId, created.moved, writesBefore)
      await kept.orderPlaced(reply, resellerId, created)
    }
  )
  // Orders another node placed move this node's kept answers forward too (a shared store).
  if (service.ctx.sharedStore && opts.followOtherNodes !== false) {
    const unwatch = await service.orders.watchPlacedElsewhere(async (resellerId, placed) => {
      keys.orderPlaced(resellerId, placed.moved, placed.newBalance)
      await kept.orderPlacedElsewhere(resellerId, placed)
    })
    app.addHook('onClose', async () => await unwatch())
  }

  await app.register(swagger, swaggerOptions(API_VERSION))

  const typed = app.withTypeProvider<TypeBoxTypeProvider>()
  const router = new ApiRouter(typed)
  registerAcmePublicPages(router, service)
  // The local CA's CRL is public, as relying parties fetch it without a key (RFC 5280 §4.2.1.13)
  registerCrlRoutes(router, service)
  if (resellerApi) {
    registerCatalogueRoutes(router, service)
    registerOrderRoutes(router, service)
    registerBillingRoutes(router, service)
    registerAccountRoutes(router, service)
    registerCertificateRoutes(router, service)
    registerAcmeRoutes(router, service)
    registerEventRoutes(router, service)
    registerInstallationRoutes(router, service)
    // Renewal automation (RFC 9773 window, delegated DNS, dns-persist-01)
    registerRenewalRoutes(router, service)
    router.get(
      '/openapi.json',
      {
        operationId: 'getOpenApiDescription',
        tags: ['Description'],
        summary: 'Read this description of the API',
        description:
          'This OpenAPI 3.0 description of the reseller API, as docs/openapi.json holds it: generate a typed client from it.',
        response: { 200: OpenApiDocument }
      },
      async () => app.swagger() as unknown as Static<typeof OpenApiDocument>
    )
  }
  if (opts.extend) await opts.extend(app, router)
  router.finish()

  // Leaves of the local CA name this listener's CRL unless the admin set another address.
  app.addHook('onListen', async () => {
    const addr = app.server.address()
    if (addr && typeof addr === 'object') {
      const any = addr.address === '0.0.0.0' || addr.address === '::'
      const host = any ? '127.0.0.1' : addr.address.includes(':') ? `[${addr.address}]` : addr.address
      service.crl.listenerUrl ??= `http://${host}:${addr.port}`
    }
  })

  app.setNotFoundHandler((request, reply) => {
    reply.code(404).send(failure(`no such endpoint: ${request.method} ${request.url.split('?')[0]}`))
  })
  return app
}

export interface Listening {
  app: App
  url: string
  port: number
  close(): Promise<void>
}

export async function listen(app: App, host = '127.0.0.1', port = 0): Promise<Listening> {
  await app.listen({ host, port })
  const addr = app.server.address()
  const actualPort = typeof addr === 'object' && addr ? addr.port : port
  const shownHost = host.includes(':') ? `[${host}]` : host
  const scheme = 'setSecureContext' in app.server ? 'https' : 'http'
  return {
    app,
    url: `${scheme}://${shownHost}:${actualPort}`,
    port: actualPort,
    close: () => app.close()
  }
}
