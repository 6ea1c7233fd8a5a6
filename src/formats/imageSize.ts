/** Width and height of a base64 PNG, GIF or JPEG from its header (for token estimates). */

/** Pixel size of a base64-encoded image, or undefined when the header is not understood. */
export function imageSizeOfBase64(data: string): { width: number; height: number } | undefined {
  // 64 KB of base64 is enough to reach a JPEG's SOF marker in practice.
  const bytes = Buffer.from(data.slice(0, 65_536).replace(/[^A-Za-z0-9+/]/g, ''), 'base64');
  if (bytes.length >= 24 && bytes.readUInt32BE(0) === 0x89504e47) {
    return { width: bytes.readUInt32BE(16), height: bytes.readUInt32BE(20) };
  }
  if (bytes.length >= 10 && bytes.toString('ascii', 0, 3) === 'GIF') {
    return { width: bytes.readUInt16LE(6), height: bytes.readUInt16LE(8) };
  }
  if (bytes.length >= 4 && bytes[0] === 0xff && bytes[1] === 0xd8) {
    let at = 2;
    while (at + 9 < bytes.length) {
      if (bytes[at] !== 0xff) return undefined;
      const marker = bytes[at + 1] ?? 0;
      const length = bytes.readUInt16BE(at + 2);
      // SOF0..SOF15 except DHT (C4), JPG (C8) and DAC (CC) carry the frame size.
      if (
        marker >= 0xc0 &&
        marker <= 0xcf &&
        marker !== 0xc4 &&
        marker !== 0xc8 &&
        marker !== 0xcc
      ) {
        return { height: bytes.readUInt16BE(at + 5), width: bytes.readUInt16BE(at + 7) };
      }
      at += 2 + length;
    }
  }
  return undefined;
}

/** Longest edge and pixel count Anthropic scales images down to before counting. */
const MAX_EDGE = 1568;
const MAX_PIXELS = 1_150_000;

/** Anthropic's published estimate: tokens = width × height / 750 after scaling down. */
export function imageTokensOfSize(width: number, height: number): number {
  if (width <= 0 || height <= 0) return 0;
  let scale = Math.min(1, MAX_EDGE / Math.max(width, height));
  scale = Math.min(scale, Math.sqrt(MAX_PIXELS / (width * height)));
  return Math.max(1, Math.ceil((width * scale * (height * scale)) / 750));
}
