/** One request header as a string. */
import type { IncomingHttpHeaders } from 'node:http';

/** The first value of header `name` (lower case), or undefined when it was not sent. */
export function header(headers: IncomingHttpHeaders, name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
}
