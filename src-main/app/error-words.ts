/**
 * Errors as the desktop screens say them. The core's messages serve the reseller API too, and
 * some name the API route that does the next step ("pay it first (POST /credits)"): words for a
 * script's author, not for a person at the screens, who does that step with a button. The
 * bridge answers with the screen's words instead; the reseller API keeps the core's.
 */

/** Each route a core message may name, and where on screen the same is done. */
const ROUTE_WORDS: [RegExp, string][] = [
  [/\s*\(POST \/credits\)/g, ' with "Pay from credit" on the order page'],
  [/\bPOST \/ssl\/configure first\b/g, 'submit a CSR on the order page first'],
  [/\bPOST \/ssl\/reissue\b/g, 'a reissue on the order page'],
  [/\bPOST \/ssl\/resend-validation\b/g, '"Resend" on the order page'],
  [/\bPOST \/ssl\/change-dcv\b/g, 'a change of validation method on the order page']
]
/** A route in parentheses that no entry above words: the sentence reads whole without it. */
const BARE_ROUTE = /\s*\((?:GET|POST|PUT|DELETE) \/[^\s)]*\)/g

export function inScreenWords(message: string): string {
  let out = message
  for (const [route, words] of ROUTE_WORDS) out = out.replace(route, words)
  return out.replace(BARE_ROUTE, '')
}
