/**
 * What an alert says on each channel. Every text here comes partly from outside (a domain name,
 * a CA's or a server's error message), so it is cut to a bounded size and cleaned for the place
 * it goes: no line break in a mail subject (a CR/LF there would start a new header, RFC 5322
 * §2.2), and Slack's control sequences (`<!channel>`, links) escaped as Slack documents
 * ("Escaping text": &, < and >).
 */
import { signWebhook, DELIVERY_HEADER, EVENT_HEADER, SIGNATURE_HEADER, TIMESTAMP_HEADER } from '../deploy/webhook'

/** Longest subject kept: a mail client shows about this much, and a header stays one line. */
export const SUBJECT_LIMIT = 160
/** Longest alert message kept (an error from a server can be long). */
export const MESSAGE_LIMIT = 2000
/** Longest body of a delivery (the weekly digest lists at most DIGEST_LINES alerts). */
export const BODY_LIMIT = 64 * 1024

/** One line: control characters (CR, LF, NUL, …) become spaces, then cut to `limit`. */
export function oneLine(text: string, limit = SUBJECT_LIMIT): string {
  const flat = text
    .replace(/[\p{Cc}\u2028\u2029]+/gu, ' ')
    .replace(/\s+/g, ' ')
    .trim()
  return flat.length > limit ? `${flat.slice(0, limit - 1)}…` : flat
}

/** Text without control characters other than line breaks, cut to `limit`. */
export function bounded(text: string, limit = MESSAGE_LIMIT): string {
  // eslint-disable-next-line no-control-regex
  const clean = text.replace(/\r\n?/g, '\n').replace(/[\u0000-\u0008\u000b-\u001f\u007f]/g, ' ')
  return clean.length > limit ? `${clean.slice(0, limit - 1)}…` : clean
}

export interface Message {
  /** `alert.raised`, `alert.digest` or `alert.test`. */
  event: string
  delivery: string
  subject: string
  body: string
  /** What the generic webhook carries besides subject and body. */
  data: Record<string, unknown>
}

/** Slack's three escapes; everything else is sent as written. */
const slackEscape = (s: string): string => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;')

/** Slack incoming webhooks (and Mattermost, Rocket.Chat): `text` with mrkdwn. */
export function slackPayload(m: Message): string {
  return JSON.stringify({ text: `*${slackEscape(m.subject)}*\n${slackEscape(m.body)}` })
}

/**
 * Microsoft Teams through a Workflows "post to a channel when a webhook request is received"
 * URL: a message with one Adaptive Card (the Office 365 connectors' MessageCard is retired).
 */
export function teamsPayload(m: Message): string {
  return JSON.stringify({
    type: 'message',
    attachments: [
      {
        contentType: 'application/vnd.microsoft.card.adaptive',
        content: {
          $schema: 'http://adaptivecards.io/schemas/adaptive-card.json',
          type: 'AdaptiveCard',
          version: '1.4',
          body: [
            { type: 'TextBlock', text: m.subject, weight: 'Bolder', size: 'Medium', wrap: true },
            { type: 'TextBlock', text: m.body, wrap: true }
          ]
        }
      }
    ]
  })
}

/**
 * The generic webhook: JSON signed like deploy webhooks (HMAC-SHA256 over `<timestamp>.<body>`,
 * checked with `verifyWebhookSignature`), so one receiver serves both.
 */
export function signedPayload(
  m: Message,
  secret: string,
  timestamp: number
): { body: string; headers: Record<string, string> } {
  const body = JSON.stringify({ type: m.event, delivery: m.delivery, subject: m.subject, text: m.body, ...m.data })
  return {
    body,
    headers: {
      'user-agent': 'CertDesk-Alerts/1',
      [TIMESTAMP_HEADER]: String(timestamp),
      [SIGNATURE_HEADER]: signWebhook(secret, timestamp, body),
      [DELIVERY_HEADER]: m.delivery,
      [EVENT_HEADER]: m.event
    }
  }
}
