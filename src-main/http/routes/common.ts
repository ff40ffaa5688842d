import { Type } from '@sinclair/typebox'
import { MAX_IDEMPOTENCY_KEY_LENGTH } from '../../core/orders/idempotency'
import { INVALID_MESSAGE } from '../validators'

/**
 * The `Idempotency-Key` request header of POST /orders and POST /credits: 1 to 255 visible
 * ASCII characters (the core refuses anything else with 400).
 */
export const IdempotencyHeaders = Type.Object({
  'idempotency-key': Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: MAX_IDEMPOTENCY_KEY_LENGTH,
      pattern: '^[\\x21-\\x7E]+$',
      [INVALID_MESSAGE]: `Idempotency-Key must be 1-${MAX_IDEMPOTENCY_KEY_LENGTH} visible ASCII characters`,
      examples: ['order-2026-0001'],
      description:
        'Makes a retry safe: a second request with the same key and the same body (compared by meaning: key order and spacing do not matter) gets the first answer again, with Idempotent-Replayed: true, and is charged once. The same key with another body is 409. 1 to 255 visible ASCII characters; kept per account.'
    })
  )
})
