import type { IncomingMessage } from 'node:http';
import { isIP } from 'node:net';
import { parseTrustedProxies } from '../config/trusted-proxies.ts';

/**
 * Who the client is, for the per-address bounds and the log line: the socket's peer, unless the
 * peer is one of the operator's proxies (`TRUSTED_PROXIES`). Then the forwarded chain is walked from
 * the right past trusted hops, as Express's `trust proxy`, nginx's `real_ip` (recursive) and Envoy's
 * `xff_num_trusted_hops` do: the first hop not trusted is the client. A hop the client itself wrote
 * sits to the left of what the proxies appended, so it is never reached while a trusted proxy stands
 * between; without a trusted peer the headers are not read at all.
 */
export interface ClientAddresses {
  /** The client address of a request (IPv4-mapped IPv6 written as IPv4). */
  of(req: IncomingMessage): string;
  /** Whether a peer address is a trusted proxy. */
  isProxy(address: string): boolean;
}

export function createClientAddresses(trusted: readonly string[]): ClientAddresses {
  const peerOf = (req: IncomingMessage) => plain(req.socket.remoteAddress ?? '');
  if (trusted.length === 0) return { of: peerOf, isProxy: () => false };
  const list = parseTrustedProxies(trusted);
  const isProxy = (address: string) => {
    const family = isIP(address);
    return family !== 0 && list.check(address, family === 4 ? 'ipv4' : 'ipv6');
  };
  return {
    isProxy: (address) => isProxy(plain(address)),
    of(req) {
      let client = peerOf(req);
      if (!isProxy(client)) return client;
      const hops = forwardedChain(req);
      for (let i = hops.length - 1; i >= 0; i--) {
        const hop = plain(hops[i] as string);
        // Not an address (`unknown`, an obfuscated name, garbage): the proxy that wrote it is the
        // last thing known for sure.
        if (isIP(hop) === 0) return client;
        client = hop;
        if (!isProxy(hop)) return hop;
      }
      return client;
    },
  };
}

/** `X-Forwarded-For`, or else RFC 7239 `Forwarded`'s `for=`, as a list from the client to the last proxy. */
function forwardedChain(req: IncomingMessage): string[] {
  const xff = req.headers['x-forwarded-for'];
  if (xff !== undefined)
    return String(xff)
      .split(',')
      .map((hop) => hop.trim());
  const forwarded = req.headers.forwarded;
  if (forwarded === undefined) return [];
  const hops: string[] = [];
  for (const element of forwarded.split(',')) {
    const pair = element
      .split(';')
      .map((part) => part.trim())
      .find((part) => part.slice(0, 4).toLowerCase() === 'for=');
    hops.push(pair === undefined ? '' : forwardedNode(pair.slice(4)));
  }
  return hops;
}

/** A `for=` node: `192.0.2.1`, `"192.0.2.1:4711"`, `"[2001:db8::1]:4711"`; anything else is returned as is. */
function forwardedNode(value: string): string {
  const unquoted = value.startsWith('"') && value.endsWith('"') ? value.slice(1, -1) : value;
  if (unquoted.startsWith('[')) return unquoted.slice(1, unquoted.indexOf(']'));
  const colon = unquoted.indexOf(':');
  return colon !== -1 && unquoted.indexOf(':', colon + 1) === -1 ? unquoted.slice(0, colon) : unquoted;
}

function plain(address: string): string {
  return address.startsWith('::ffff:') && isIP(address.slice(7)) === 4 ? address.slice(7) : address;
}
