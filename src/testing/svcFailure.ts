import { isSvcError } from '../errors/index.js';

/** The SvcError fields of what `fn` throws; throws itself when `fn` returns or throws another error. */
export function svcFailure(fn: () => unknown): { code: string; status: number; param: unknown } {
  try {
    fn();
  } catch (error) {
    if (isSvcError(error))
      return { code: error.code, status: error.status, param: error.details?.param };
    throw error;
  }
  throw new Error('expected a failure');
}
