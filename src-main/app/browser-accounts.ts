/**
 * Browser mode on a team server: admins sign in with their name, password and, when they set it
 * up, a TOTP code (`POST /ui/sign-in`), and each request is theirs by the session cookie, whose
 * session the core keeps in the store (core/admins/sessions.ts). The UI's files hold the sign-in
 * form and are served without a session; every RPC call needs one.
 */
import { Type } from '@sinclair/typebox'
import type { FastifyRequest } from 'fastify'
import { SIGN_IN_PATH, SIGN_OUT_PATH } from '../../src-preload/channels'
import { AdminName, Password, TotpCode } from '../../src-shared/admin-records'
import { SESSION_ABSOLUTE_HOURS, SESSION_IDLE_MINUTES } from '../core/admins'
import type { Service } from '../core/service'
import { LOGIN_PATH, page, sessionCookie, sessionToken, signOutReply, UI_PREFIX, type BrowserAuth } from './browser-ui'
import type { Caller } from './caller'

const SignInBody = Type.Object(
  { name: AdminName, password: Password, code: Type.Optional(TotpCode) },
  { additionalProperties: false }
)

/** Where a request comes from, for the sign-in limits and the audit log. */
const sourceOf = (request: FastifyRequest): string => request.ip

export function accountAuth(service: Service): BrowserAuth {
  const sessions = service.admins.sessions
  return {
    signIn: 'password',
    filesNeedSession: false,
    async caller(request): Promise<Caller | { refused: string }> {
      const token = sessionToken(request)
      const check = token ? sessions.check(token) : { state: 'none' as const }
      if (check.state === 'expired')
        return {
          refused: `sign in again: your session ended after ${SESSION_IDLE_MINUTES} minutes without use or ${SESSION_ABSOLUTE_HOURS} hours in all`
        }
      if (check.state !== 'valid') return { refused: 'sign in with your admin account' }
      const { admin, sessionId } = check.session
      return {
        actor: admin.name,
        role: admin.role,
        adminId: admin.id,
        sessionId,
        totpEnabled: admin.totpEnabled,
        source: sourceOf(request)
      }
    },
    install(router) {
      router.post(SIGN_IN_PATH, { hide: true, body: SignInBody }, async (request, reply) => {
        const body = request.body as { name: string; password: string; code?: string }
        // The route authenticates on its own, so the listener does not wait for the lock for it.
        await service.ctx.whenWritable()
        const { token, admin } = await sessions.signIn({ ...body, source: sourceOf(request) })
        return reply
          .code(200)
          .header('set-cookie', sessionCookie(request, token))
          .header('cache-control', 'no-store')
          .send({ success: true, result: { name: admin.name, role: admin.role } })
      })
      router.post(SIGN_OUT_PATH, { hide: true }, async (request, reply) => {
        const token = sessionToken(request)
        if (token) {
          await service.ctx.whenWritable()
          sessions.end(token, sourceOf(request))
        }
        return signOutReply(reply, request)
      })
      // The desktop's one-time links mean nothing here: say where to sign in instead.
      router.get(LOGIN_PATH, { hide: true }, async (_request, reply) =>
        page(
          reply,
          404,
          'This CertDesk signs admins in with their accounts',
          `Open <a href="${UI_PREFIX}">${UI_PREFIX}</a> and sign in with your admin name and password.`
        )
      )
    }
  }
}
