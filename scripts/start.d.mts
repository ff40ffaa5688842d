/** Types of scripts/start.mjs for the tests that import it. */

/** The `certdesk` arguments `npm start` runs without a window: `serve --demo --ui` and the user's own. */
export function browserModeArgs(args: string[]): string[]
