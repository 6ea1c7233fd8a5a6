/** Reading a large text file without one native block of its size. */
import { closeSync, openSync, readSync } from 'node:fs';
import { StringDecoder } from 'node:string_decoder';

const PIECE_BYTES = 64 * 1024;

/**
 * The file's UTF-8 text, read 64 KiB at a time. `readFileSync` reads a file into one native block
 * of its size; freeing a block of several MB raises glibc's mmap threshold to that size for the
 * rest of the process, and large buffers freed later then stay resident
 * (docs/decisions/155-buyer-memory-with-many-peers.md).
 */
export function readTextFile(path: string): string {
  const fd = openSync(path, 'r');
  try {
    const buffer = Buffer.allocUnsafe(PIECE_BYTES);
    const decoder = new StringDecoder('utf8');
    let text = '';
    for (let read = readSync(fd, buffer); read > 0; read = readSync(fd, buffer))
      text += decoder.write(buffer.subarray(0, read));
    return text + decoder.end();
  } finally {
    closeSync(fd);
  }
}
