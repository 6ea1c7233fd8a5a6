/** Reads one text field of a multipart/form-data body (the `model` of an image edit). */

export function multipartBoundary(contentType: string | undefined): string | undefined {
  if (!contentType?.toLowerCase().startsWith('multipart/form-data')) return undefined;
  const match = /boundary=(?:"([^"]+)"|([^;\s]+))/i.exec(contentType);
  return match?.[1] ?? match?.[2];
}

/** The value of text field `name`, read on a latin1 view (one char per byte, lossless). */
export function multipartField(
  body: Uint8Array,
  boundary: string,
  name: string,
): string | undefined {
  const b = boundary.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const pattern = new RegExp(
    `--${b}\\r\\nContent-Disposition: form-data; name="${name}"\\r\\n(?:[^\\r\\n]+\\r\\n)*\\r\\n([^\\r]*)\\r\\n--${b}`,
    'i',
  );
  return pattern.exec(Buffer.from(body).toString('latin1'))?.[1];
}
