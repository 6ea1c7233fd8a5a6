/**
 * The name of the wallet in `<data-dir>/identity.key`. Its own module, so that code which only
 * names it (the gateway's workspaces, for `svc gateway key list`) loads no signing library
 * (docs/decisions/215-commands-load-their-code-when-they-run.md).
 */
export const DEFAULT_IDENTITY = 'default';
