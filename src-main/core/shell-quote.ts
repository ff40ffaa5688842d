/**
 * Quoting for the command lines CertDesk shows for pasting into a shell (the ACME client
 * set-up commands). Every part of a generated command that comes from data (URLs, key ids,
 * keys, domain names, addresses, file names) goes through `shellQuote`, so a stored value can
 * never end a word, start a command, or expand: it reaches the program as exactly one argument.
 */

/**
 * Words left bare because no POSIX shell (nor bash or zsh) gives any of their characters a
 * meaning: no quotes, `$`, backquote, `;`, `&`, `|`, redirections, globs, `~`, `#`, `!`,
 * spaces or line breaks. A leading `=` is excluded because zsh expands `=name` to a path.
 */
const BARE = /^[A-Za-z0-9@%+:,./_-][A-Za-z0-9@%+=:,./_-]*$/

/**
 * One shell word that stands for exactly `value`. Inside single quotes every character is
 * literal, line breaks included (POSIX.1-2017 XCU §2.2.2); a single quote itself cannot
 * appear there, so it is written as `'\''` (close, escaped quote, reopen; §2.2.1).
 */
export function shellQuote(value: string): string {
  if (BARE.test(value)) return value
  return `'${value.replace(/'/g, `'\\''`)}'`
}
