/**
 * `shellQuote` against real shells: every value, however hostile, comes back from the shell as
 * exactly one argument equal to itself, and nothing in it runs.
 */
import { describe, expect, it } from 'vitest'
import { shellQuote } from '../../src-main/core/shell-quote'
import { runThroughShell, SHELLS } from '../support/shell-argv'

const HOSTILE = [
  'plain',
  '',
  'two words',
  "it's",
  "''",
  '"double" quotes',
  '$(touch pwned)',
  '`touch pwned`',
  '${HOME}',
  '$HOME',
  'a;touch pwned;#',
  'a && touch pwned',
  'a | tee pwned',
  'a > pwned',
  '< /etc/passwd',
  'line one\ntouch pwned',
  'carriage\rreturn',
  'tab\there',
  'back\\slash\\',
  "\\'",
  '*',
  '*.example.com',
  '[a-z]?',
  '~',
  '~root/x',
  '#not a comment',
  'x#y',
  '!!',
  '!$',
  '=ls',
  'a=b',
  '--flag=value',
  '-n',
  '{a,b}',
  'bücher.example',
  'emoji 🔐 ok',
  '\u2028line separator',
  'ok@example.com'
]

describe('shellQuote', () => {
  it.each(SHELLS)('gives every hostile value back as one argument through %s, running nothing', (shell) => {
    for (const value of HOSTILE) {
      const r = runThroughShell(shell, `curl ${shellQuote(value)}`)
      expect(r.stderr, JSON.stringify(value)).toBe('')
      expect(
        r.invocations.map((i) => i.args),
        JSON.stringify(value)
      ).toEqual([[value]])
      expect(r.leftovers, JSON.stringify(value)).toEqual([])
    }
  })

  it('leaves words with no shell meaning bare and quotes the rest', () => {
    expect(shellQuote('kid_AbC-9')).toBe('kid_AbC-9')
    expect(shellQuote('https://localhost:7781/acme/directory')).toBe('https://localhost:7781/acme/directory')
    expect(shellQuote('ops+acme@example.com')).toBe('ops+acme@example.com')
    expect(shellQuote('*.example.com')).toBe("'*.example.com'")
    expect(shellQuote("it's")).toBe("'it'\\''s'")
    expect(shellQuote('=ls')).toBe("'=ls'")
    expect(shellQuote('')).toBe("''")
  })
})
