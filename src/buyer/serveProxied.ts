/**
 * The one way a proxied request (text or media) is served, over HTTP or in the gateway's process:
 * its body goes into the request value, the request runs, and a failure is answered in the
 * client's style and recorded.
 */
import { type SvcError, toSvcError } from '../errors/index.js';
import { type LoadedBody, type ProxyContext, withBody, withHeaderLimits } from './context.js';
import { failRequest } from './failRequest.js';

/** Serves one request; the failure it answered, if any (the caller may close the connection). */
export async function serveProxied(
  opened: ProxyContext,
  load: () => LoadedBody | Promise<LoadedBody>,
  run: (ctx: ProxyContext) => Promise<void>,
): Promise<SvcError | undefined> {
  let ctx = opened;
  try {
    const loaded = await load();
    ctx = withBody(opened, loaded);
    // An in-process call's limits come with it; over HTTP the gateway's headers carry them.
    if (!loaded.limits) ctx = withHeaderLimits(ctx);
    await run(ctx);
    return undefined;
  } catch (error) {
    const svcError = toSvcError(error);
    if (svcError.code === 'internal_error') {
      ctx.service.deps.logger.error({ err: error }, 'proxy request failed');
    }
    failRequest(ctx, svcError);
    return svcError;
  }
}
