/** What to say about, or throw for, a caught value that may not be an Error. */

/** The message of a thrown value: an Error's `message`, anything else as a string. */
export function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** A thrown value as an Error (for `stream.abort`, `cause` and other Error-only places). */
export function asError(error: unknown): Error {
  return error instanceof Error ? error : new Error(String(error));
}

/** The first line of a thrown value's message (viem's errors add many lines of details). */
export function errorFirstLine(error: unknown): string {
  return errorMessage(error).split('\n')[0] ?? '';
}
