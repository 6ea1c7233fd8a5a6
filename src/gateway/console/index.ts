/**
 * The web console (docs/decisions/135-console-sign-in.md): served by the gateway at /console,
 * same origin as the API, every asset bundled. Key holders get a read-only view of their key;
 * members and admins sign in through one-time links and manage keys, members, budgets and logs.
 */
export { handleConsole, isConsolePath } from './server/handleConsole.js';
export { createLoginLink, LOGIN_LINK_MS } from './server/sessions.js';
