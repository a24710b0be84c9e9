// The shape every client class module exports (JSDoc only).

/**
 * @typedef {{ url: string, address: string, paths: string[], ja4: Set<string>, tlsJa4: Set<string> }} Door
 *   One signup's own entrance (https://localhost:<port>): a TLS-terminating proxy that passes the
 *   client's JA4 to the app in X-JA4 and appends X-Forwarded-For with the signup's address.
 * @typedef {{ email: string, name: string }} Identity
 * @typedef {{
 *   tempRoot: string,
 *   appUrl: string,
 *   browserEnv: NodeJS.ProcessEnv,
 *   displayEnv: NodeJS.ProcessEnv | undefined,
 *   personDisplayEnv: NodeJS.ProcessEnv | undefined,
 *   pageModel: { personPageFields: Function, forgedPageFields: Function },
 *   chromiumHeaders: () => Promise<{ navigate: [string, string][], fetch: [string, string][] }>,
 *   answersFor: (address: string) => { path: string, status: number, code?: string }[],
 *   personBehaviours: Record<string, number>[],
 *   log: (line: string) => void,
 * }} RunContext
 *   personBehaviours: the page counts this run's real people's pages sent (first /signup), newest last
 * @typedef {{ signup(door: Door, identity: Identity): Promise<unknown>, close(): Promise<void> }} RunningClient
 * @typedef {{
 *   id: string,
 *   label: string,
 *   group: "bots" | "people",
 *   model?: boolean,
 *   needs: ("chromium" | "display" | "xdotool")[],
 *   start(ctx: RunContext): Promise<RunningClient>,
 * }} ClientClass
 */

export {};
