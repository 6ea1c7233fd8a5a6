/**
 * The `: svc-usage {...}` SSE comment the buyer writes last on every stream it answered: what the
 * delivered part cost. An SSE comment, so SDKs ignore it; the gateway reads it to settle. When
 * the stream failed after its first byte, `errorCode` says so (the client saw its format's error
 * event just before).
 */
import { z } from 'zod';

export const usageCommentSchema = z.object({
  inputTokens: z.number().int().nonnegative(),
  cachedInputTokens: z.number().int().nonnegative().default(0),
  outputTokens: z.number().int().nonnegative(),
  costUsd: z.string(),
  errorCode: z.string().max(64).optional(),
});
export type UsageComment = z.infer<typeof usageCommentSchema>;

/** The start of the comment line. */
export const USAGE_COMMENT_PREFIX = ': svc-usage ';

/** The comment as SSE bytes (a line and the blank line ending the event). */
export function encodeUsageComment(report: UsageComment): string {
  const { inputTokens, cachedInputTokens, outputTokens, costUsd, errorCode } = report;
  const json = JSON.stringify({
    inputTokens,
    cachedInputTokens,
    outputTokens,
    costUsd,
    ...(errorCode ? { errorCode } : {}),
  });
  return `${USAGE_COMMENT_PREFIX}${json}\n\n`;
}

/** The report of one SSE line, or null when it is not a (well-formed) usage comment. */
export function decodeUsageComment(line: string): UsageComment | null {
  if (!line.startsWith(USAGE_COMMENT_PREFIX)) return null;
  try {
    return usageCommentSchema.parse(JSON.parse(line.slice(USAGE_COMMENT_PREFIX.length)));
  } catch {
    return null;
  }
}
