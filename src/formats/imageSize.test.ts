import { describe, expect, it } from 'vitest';
import { imageSizeOfBase64, imageTokensOfSize } from './imageSize.js';

const PNG_1x1 =
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';
const GIF_1x1 = 'R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7';

function jpeg(width: number, height: number): string {
  const bytes = Buffer.from([
    0xff,
    0xd8,
    0xff,
    0xe0,
    0x00,
    0x10,
    0x4a,
    0x46,
    0x49,
    0x46,
    0x00,
    0x01,
    0x01,
    0x00,
    0x00,
    0x01,
    0x00,
    0x01,
    0x00,
    0x00,
    0xff,
    0xc0,
    0x00,
    0x11,
    0x08,
    height >> 8,
    height & 255,
    width >> 8,
    width & 255,
    0x03,
    0x01,
    0x22,
    0x00,
  ]);
  return bytes.toString('base64');
}

describe('image size', () => {
  it('reads PNG, GIF and JPEG headers', () => {
    expect(imageSizeOfBase64(PNG_1x1)).toEqual({ width: 1, height: 1 });
    expect(imageSizeOfBase64(GIF_1x1)).toEqual({ width: 1, height: 1 });
    expect(imageSizeOfBase64(jpeg(1024, 768))).toEqual({ width: 1024, height: 768 });
    expect(imageSizeOfBase64('AAAA')).toBeUndefined();
  });

  it('estimates tokens like Anthropic, scaled down to about 1.15 megapixels', () => {
    expect(imageTokensOfSize(1000, 1000)).toBe(1334);
    expect(imageTokensOfSize(4000, 3000)).toBeLessThanOrEqual(1534);
    expect(imageTokensOfSize(200, 200)).toBe(54);
  });
});
