/**
 * Just enough multipart/form-data for `/v1/images/edits`: read the `model` field and rewrite it
 * to the upstream model, leaving every other byte (the images) untouched. Works on a latin1
 * view of the bytes, which maps each byte to one character and back losslessly.
 */

/** The boundary of a multipart content type, if it is one. */
export function multipartBoundary(contentType: string | undefined): string | undefined {
  if (!contentType?.toLowerCase().startsWith('multipart/form-data')) return undefined;
  const match = /boundary=(?:"([^"]+)"|([^;\s]+))/i.exec(contentType);
  return match?.[1] ?? match?.[2];
}

function fieldPattern(boundary: string, name: string): RegExp {
  const escapedBoundary = boundary.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return new RegExp(
    `(--${escapedBoundary}\\r\\nContent-Disposition: form-data; name="${name}"\\r\\n(?:[^\\r\\n]+\\r\\n)*\\r\\n)([^\\r]*)(\\r\\n--${escapedBoundary})`,
    'i',
  );
}

/** The text value of a form field. */
export function multipartField(
  body: Uint8Array,
  boundary: string,
  name: string,
): string | undefined {
  return fieldPattern(boundary, name).exec(Buffer.from(body).toString('latin1'))?.[2];
}

/** The body with one form field's value replaced. */
export function replaceMultipartField(
  body: Uint8Array,
  boundary: string,
  name: string,
  value: string,
): Uint8Array {
  const text = Buffer.from(body).toString('latin1');
  return Buffer.from(
    text.replace(
      fieldPattern(boundary, name),
      (_all, head: string, _old, tail: string) => `${head}${value}${tail}`,
    ),
    'latin1',
  );
}
