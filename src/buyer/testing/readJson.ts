/** Typed JSON reading for tests (the shapes the assertions rely on). */
import type { CatalogEntry } from '../../catalog/index.js';

export interface ErrorBody {
  type?: string;
  error: { code: string; message: string; type: string; [detail: string]: unknown };
}

export interface ModelList {
  object: string;
  data: CatalogEntry[];
}

export async function readJson<T>(response: Response): Promise<T> {
  return (await response.json()) as T;
}
