/**
 * `text` cut to at most `maxBytes` bytes of UTF-8, never inside a character. The API server measures
 * Event fields in bytes (Go `len`), so a note of 1024 multi-byte characters would be rejected as a
 * whole; cutting keeps the event and loses only the tail.
 */
export function truncateUtf8(text: string, maxBytes: number): string {
  if (Buffer.byteLength(text, 'utf8') <= maxBytes) return text;
  let bytes = 0;
  let end = 0;
  for (const char of text) {
    const size = Buffer.byteLength(char, 'utf8');
    if (bytes + size > maxBytes) break;
    bytes += size;
    end += char.length;
  }
  return text.slice(0, end);
}
