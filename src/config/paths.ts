/** Dotted paths ("buyer.routingPreferences.minTrustScore") into plain JSON objects. */

type JsonObject = Record<string, unknown>;

function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Splits a dotted path, rejecting empty segments and prototype keys. */
export function splitPath(path: string): string[] {
  const parts = path.split('.');
  if (
    parts.some(
      (part) =>
        part === '' || part === '__proto__' || part === 'constructor' || part === 'prototype',
    )
  ) {
    throw new TypeError(`"${path}" is not a valid config path`);
  }
  return parts;
}

/** Reads the value at `path`, or undefined. */
export function getAtPath(root: unknown, path: string): unknown {
  let node = root;
  for (const part of splitPath(path)) {
    if (!isObject(node) || !Object.hasOwn(node, part)) return undefined;
    node = node[part];
  }
  return node;
}

/** Returns a deep copy of `root` with `value` set at `path` (undefined deletes the key). */
export function setAtPath(root: JsonObject, path: string, value: unknown): JsonObject {
  const copy = structuredClone(root);
  const parts = splitPath(path);
  let node: JsonObject = copy;
  for (const part of parts.slice(0, -1)) {
    if (!isObject(node[part])) node[part] = {};
    node = node[part] as JsonObject;
  }
  const last = parts.at(-1)!;
  if (value === undefined) delete node[last];
  else node[last] = value;
  return copy;
}

/** Deep merge of plain objects; arrays and scalars of `over` replace those of `base`. */
export function deepMerge(base: JsonObject, over: JsonObject): JsonObject {
  const out: JsonObject = { ...base };
  for (const [key, value] of Object.entries(over)) {
    out[key] =
      isObject(value) && isObject(out[key]) ? deepMerge(out[key] as JsonObject, value) : value;
  }
  return out;
}
