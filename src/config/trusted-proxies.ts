import { BlockList, isIP } from 'node:net';
import { ConfigError, nonEmpty } from './env-values.ts';

/** TRUSTED_PROXIES: the peers whose X-Forwarded-For names the client, checked at start-up. */
export function trustedProxies(env: Record<string, string | undefined>): readonly string[] {
  const entries = (nonEmpty(env, 'TRUSTED_PROXIES') ?? '')
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '');
  try {
    parseTrustedProxies(entries);
  } catch (error) {
    throw new ConfigError(`TRUSTED_PROXIES: ${(error as Error).message}`);
  }
  return Object.freeze(entries);
}

/** Parses `TRUSTED_PROXIES` entries: addresses and CIDR ranges, IPv4 or IPv6. Throws naming a bad entry. */
export function parseTrustedProxies(entries: readonly string[]): BlockList {
  const list = new BlockList();
  for (const entry of entries) {
    const [address = '', prefix, extra] = entry.split('/');
    const family = isIP(address);
    const bits = family === 4 ? 32 : 128;
    if (family === 0 || extra !== undefined || (prefix !== undefined && !/^\d{1,3}$/.test(prefix))) {
      throw new Error(`"${entry}" is not an IP address or a CIDR range such as 10.0.0.0/8 or fd00::/8`);
    }
    const type = family === 4 ? 'ipv4' : 'ipv6';
    if (prefix === undefined) list.addAddress(address, type);
    else if (Number(prefix) > bits) throw new Error(`"${entry}": an IPv${family} prefix is at most /${bits}`);
    else list.addSubnet(address, Number(prefix), type);
  }
  return list;
}
