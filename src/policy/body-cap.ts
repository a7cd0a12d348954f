import type { IncomingMessage } from 'node:http';

/** A request body as read: its text, or why there is none to serve. */
export type Body = { text: string } | { problem: 'too large' | 'client gone' };

/**
 * The request body, at most `maxBytes` (a lying or absent Content-Length cannot get past it). A
 * client that leaves before the end is no failure of the gateway's: it is reported, not thrown.
 */
export async function readCapped(req: IncomingMessage, maxBytes: number): Promise<Body> {
  if (Number(req.headers['content-length'] ?? '0') > maxBytes) return { problem: 'too large' };
  const chunks: Buffer[] = [];
  let length = 0;
  try {
    for await (const chunk of req) {
      length += (chunk as Buffer).length;
      if (length > maxBytes) return { problem: 'too large' };
      chunks.push(chunk as Buffer);
    }
  } catch {
    return { problem: 'client gone' };
  }
  return { text: Buffer.concat(chunks).toString('utf8') };
}
