import dns from 'node:dns';
import net from 'node:net';

/**
 * SSRF guard for webhook URLs. A receiver must be a public HTTPS endpoint: hosts that are, or resolve to,
 * loopback, private, CGNAT, link-local / cloud-metadata, multicast, reserved or documentation addresses are
 * refused when a subscription is saved and again when a connection is opened (after DNS resolution, so a
 * name that re-binds to a private address between the two checks still fails).
 */
// Two lists: a BlockList matches IPv4 addresses against IPv6 rules through their mapped form (::ffff:a.b.c.d).
const BLOCKED_V4 = new net.BlockList();
const BLOCKED_V6 = new net.BlockList();
for (const [prefix, bits] of [
  ['0.0.0.0', 8], // "this network"
  ['10.0.0.0', 8], // RFC 1918
  ['100.64.0.0', 10], // CGNAT
  ['127.0.0.0', 8], // loopback
  ['169.254.0.0', 16], // link-local, cloud metadata (169.254.169.254)
  ['172.16.0.0', 12], // RFC 1918
  ['192.0.0.0', 24], // IETF protocol assignments
  ['192.0.2.0', 24], // documentation
  ['192.88.99.0', 24], // 6to4 relay anycast
  ['192.168.0.0', 16], // RFC 1918
  ['198.18.0.0', 15], // benchmarking
  ['198.51.100.0', 24], // documentation
  ['203.0.113.0', 24], // documentation
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, broadcast
] as const)
  BLOCKED_V4.addSubnet(prefix, bits, 'ipv4');
for (const [prefix, bits] of [
  ['::', 96], // unspecified, loopback, IPv4-compatible
  ['::ffff:0:0', 96], // IPv4-mapped: refused outright rather than unwrapped
  ['64:ff9b::', 96], // NAT64
  ['64:ff9b:1::', 48], // local-use NAT64
  ['100::', 64], // discard
  ['2001::', 23], // IETF protocol assignments (Teredo, benchmarking, ORCHID...)
  ['2001:db8::', 32], // documentation
  ['2002::', 16], // 6to4 (embeds an IPv4 address)
  ['fc00::', 7], // unique local (ULA)
  ['fe80::', 10], // link-local
  ['fec0::', 10], // site-local (deprecated)
  ['ff00::', 8], // multicast
] as const)
  BLOCKED_V6.addSubnet(prefix, bits, 'ipv6');

/** True when the address is not a public unicast address (any unparseable input counts as not public). */
export function isPrivateAddress(address: string): boolean {
  const family = net.isIP(address);
  if (family === 4) return BLOCKED_V4.check(address, 'ipv4');
  if (family === 6) {
    // Only global unicast (2000::/3) is reachable on the public internet.
    const firstHextet = parseInt(expandIpv6FirstHextet(address), 16);
    if (Number.isNaN(firstHextet) || (firstHextet & 0xe000) !== 0x2000) return true;
    return BLOCKED_V6.check(address, 'ipv6');
  }
  return true;
}

function expandIpv6FirstHextet(address: string): string {
  const lower = address.toLowerCase().split('%')[0];
  return lower.startsWith('::') ? '0' : lower.split(':')[0];
}

export type LookupAll = (hostname: string) => Promise<{ address: string; family: number }[]>;

const systemLookupAll: LookupAll = (hostname) => dns.promises.lookup(hostname, { all: true, verbatim: true });

/** The URL's host without IPv6 brackets, e.g. `::1` for `https://[::1]/`. */
export function hostOf(url: URL): string {
  return url.hostname.replace(/^\[(.*)\]$/, '$1');
}

export class PrivateAddressError extends Error {
  readonly code = 'ERR_WEBHOOK_PRIVATE_ADDRESS';
  constructor(host: string, address: string) {
    super(host === address ? `${host} is not a public address` : `${host} resolves to a non-public address`);
  }
}

/** One answer whether the host does not resolve or is not public, so a caller cannot map internal names. */
export const NOT_PUBLIC_HOST = 'must name a host that resolves to public addresses only';

/**
 * Save-time check of a webhook URL. Returns the message for fieldErrors.url, or null when acceptable; why a host was
 * refused goes only to `debug` (the server log).
 * A host that does not exist is refused; a DNS failure that may be temporary is let through, because the
 * connect-time guard checks every address again before any byte is sent.
 */
export async function checkWebhookUrl(
  raw: string,
  options: {
    allowPrivateNetworks: boolean;
    lookup?: LookupAll;
    lookupTimeoutMs?: number;
    debug?: (why: string) => void;
  },
): Promise<string | null> {
  const refuse = (why: string) => (options.debug?.(why), NOT_PUBLIC_HOST);
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return 'must be an absolute https:// URL';
  }
  if (url.protocol !== 'https:') return 'must use https://';
  if (url.username || url.password) return 'must not contain credentials';
  if (options.allowPrivateNetworks) return null;
  const host = hostOf(url);
  if (net.isIP(host)) return isPrivateAddress(host) ? refuse(`${host} is not a public address`) : null;
  let addresses: { address: string }[];
  try {
    addresses = await withTimeout((options.lookup ?? systemLookupAll)(host), options.lookupTimeoutMs ?? 3_000);
  } catch (err) {
    const code = (err as { code?: string }).code;
    return code === 'ENOTFOUND' || code === 'ENODATA' ? refuse(`${host} does not resolve`) : null;
  }
  const blocked = addresses.find((a) => isPrivateAddress(a.address));
  return blocked ? refuse(new PrivateAddressError(host, blocked.address).message) : null;
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(Object.assign(new Error('DNS lookup timed out'), { code: 'ETIMEOUT' })), ms);
    promise.then(resolve, reject).finally(() => clearTimeout(timer));
  });
}

type LookupCallback = (
  err: NodeJS.ErrnoException | null,
  address: string | dns.LookupAddress[],
  family?: number,
) => void;

/**
 * A `lookup` for net/tls.connect (passed to undici's connector) that resolves the name and fails the
 * connection when ANY resolved address is not public. The socket then connects to exactly the addresses
 * checked here, so DNS rebinding cannot slip a private address in after the check.
 */
export function guardedLookup(resolveAll: LookupAll = systemLookupAll) {
  return (hostname: string, options: dns.LookupOptions, callback: LookupCallback): void => {
    resolveAll(hostname).then(
      (addresses) => {
        const family = options.family === 'IPv4' ? 4 : options.family === 'IPv6' ? 6 : options.family;
        const usable = family ? addresses.filter((a) => a.family === family) : addresses;
        const blocked = addresses.find((a) => isPrivateAddress(a.address));
        if (blocked) return callback(new PrivateAddressError(hostname, blocked.address) as NodeJS.ErrnoException, '');
        if (usable.length === 0)
          return callback(Object.assign(new Error(`${hostname} has no usable address`), { code: 'ENOTFOUND' }), '');
        if (options.all)
          return callback(
            null,
            usable.map((a) => ({ address: a.address, family: a.family })),
          );
        callback(null, usable[0].address, usable[0].family);
      },
      (err: NodeJS.ErrnoException) => callback(err, ''),
    );
  };
}
