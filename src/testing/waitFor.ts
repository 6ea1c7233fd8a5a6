/** The one polling helper of the tests: effects that land after a response, nodes that find each other. */

/**
 * Polls `check` until it returns something other than undefined, null or false, and resolves with
 * it; throws after `timeoutMs` naming `what`. A check that throws fails the wait at once.
 */
export async function waitFor<T>(
  check: () => T | undefined | null | false | Promise<T | undefined | null | false>,
  timeoutMs = 20_000,
  what = 'condition',
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined && value !== null && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
