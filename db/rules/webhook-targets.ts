/**
 * Where webhooks may go. With WEBHOOK_ALLOW_PRIVATE_TARGETS false, an endpoint whose host resolves
 * to an address that is not publicly routable is refused. `refuseTarget` is the subscribe-time
 * check, a courtesy that names the problem early. It is not the guard: a name can answer a public
 * address to this check and 127.0.0.1 to the next lookup (DNS rebinding), so the delivery path
 * checks the address it actually dials, inside the connection (`workers/webhook-http.ts`), with
 * `isNonPublicAddress` below.
 *
 * The check runs inside a subscribe request, so it resolves through `lookupHost` (c-ares, off
 * libuv's thread pool; db/platform/host-resolver.ts) and gives up after TARGET_LOOKUP_TIMEOUT_MS: a host
 * whose DNS never answers is refused as not resolving. With node:dns `lookup` it had no limit at
 * all, and each such request held a web request and a pool thread for as long as getaddrinfo tried.
 */
import { BlockList, isIP, type LookupFunction } from 'node:net';
import { HOST_LOOKUP_TIMEOUT_MS, lookupHost } from '../platform/host-resolver.ts';

/**
 * The longest the subscribe-time check waits for the endpoint's addresses: `lookupHost`'s own
 * bound, enforced here too so that any resolver (an injected one, a hosts-file fallback) is held
 * to it.
 */
const TARGET_LOOKUP_TIMEOUT_MS = HOST_LOOKUP_TIMEOUT_MS;

/**
 * Every range we refuse (IANA special-purpose registries, RFC 6890 and successors). IPv6 ranges
 * that embed or translate an IPv4 address (mapped, translated, NAT64, 6to4, Teredo, the deprecated
 * IPv4-compatible form) are refused whole: each is a way to write 127.0.0.1 or 169.254.169.254
 * that a check of the IPv4 ranges alone would miss, and no partner needs one.
 */
const RANGES: readonly (readonly [network: string, prefix: number, family: 'ipv4' | 'ipv6'])[] = [
  ['0.0.0.0', 8, 'ipv4'], // "this network"
  ['10.0.0.0', 8, 'ipv4'], // private
  ['100.64.0.0', 10, 'ipv4'], // carrier-grade NAT
  ['127.0.0.0', 8, 'ipv4'], // loopback
  ['169.254.0.0', 16, 'ipv4'], // link-local, cloud metadata (169.254.169.254)
  ['172.16.0.0', 12, 'ipv4'], // private
  ['192.0.0.0', 24, 'ipv4'], // IETF protocol assignments
  ['192.0.2.0', 24, 'ipv4'], // documentation (TEST-NET-1)
  ['192.88.99.0', 24, 'ipv4'], // 6to4 relay anycast
  ['192.168.0.0', 16, 'ipv4'], // private
  ['198.18.0.0', 15, 'ipv4'], // benchmarking
  ['198.51.100.0', 24, 'ipv4'], // documentation (TEST-NET-2)
  ['203.0.113.0', 24, 'ipv4'], // documentation (TEST-NET-3)
  ['224.0.0.0', 4, 'ipv4'], // multicast
  ['240.0.0.0', 4, 'ipv4'], // reserved, broadcast
  ['::', 96, 'ipv6'], // unspecified, loopback, IPv4-compatible (deprecated)
  ['::ffff:0:0', 96, 'ipv6'], // IPv4-mapped
  ['::ffff:0:0:0', 96, 'ipv6'], // IPv4-translated (SIIT)
  ['64:ff9b::', 96, 'ipv6'], // NAT64 well-known prefix
  ['64:ff9b:1::', 48, 'ipv6'], // NAT64 local-use
  ['100::', 64, 'ipv6'], // discard-only
  ['2001::', 32, 'ipv6'], // Teredo
  ['2001:db8::', 32, 'ipv6'], // documentation
  ['2002::', 16, 'ipv6'], // 6to4
  ['3fff::', 20, 'ipv6'], // documentation (RFC 9637)
  ['fc00::', 7, 'ipv6'], // unique local
  ['fe80::', 10, 'ipv6'], // link-local
  ['fec0::', 10, 'ipv6'], // site-local (deprecated)
  ['ff00::', 8, 'ipv6'], // multicast
];

/**
 * One list per family: a BlockList matches an IPv4 address against IPv6 rules as its IPv4-mapped
 * form, so `::ffff:0:0/96` in a shared list would refuse every IPv4 address.
 */
const NON_PUBLIC = { ipv4: new BlockList(), ipv6: new BlockList() };
for (const [network, prefix, family] of RANGES) NON_PUBLIC[family].addSubnet(network, prefix, family);

/**
 * Whether an IP address is not publicly routable. Takes any textual form: IPv4 dotted quads, IPv6
 * compressed or not, with embedded dotted IPv4 (`::ffff:127.0.0.1`), hex-written IPv4 tails
 * (`::ffff:7f00:1`, as the URL parser writes them), brackets (`[::1]`, a URL's hostname) and zone
 * ids (`fe80::1%eth0`). Anything that is not an IP address counts as non-public.
 */
export function isNonPublicAddress(address: string): boolean {
  const bare = address.replace(/^\[(.*)\]$/, '$1').replace(/%.*$/, '');
  const family = isIP(bare);
  if (!family) return true;
  const type = family === 4 ? 'ipv4' : 'ipv6';
  return NON_PUBLIC[type].check(bare, type);
}

/** The host of a URL as an IP literal without brackets, or undefined when it is a name. */
export function ipLiteralHost(endpointUrl: string): string | undefined {
  const host = new URL(endpointUrl).hostname.replace(/^\[(.*)\]$/, '$1');
  return isIP(host) ? host : undefined;
}

/**
 * The one reason a target is refused at subscribe time (CONTRACT.md, "One refusal reason"). A host
 * that does not resolve and one that resolves to a private address get the same words, and neither
 * names the host or the address: two reasons would tell a partner which internal names exist.
 */
export const REFUSED_TARGET = 'must name a host that resolves to public addresses only';

/**
 * Why a target is refused at subscribe time (REFUSED_TARGET), or undefined when it may be called.
 * `lookup` is dns.lookup-compatible (tests inject their own resolver); a host it does not answer
 * for within `timeoutMs` does not resolve.
 */
export async function refuseTarget(
  endpointUrl: string,
  allowPrivate: boolean,
  lookup: LookupFunction = lookupHost,
  timeoutMs: number = TARGET_LOOKUP_TIMEOUT_MS,
): Promise<string | undefined> {
  if (allowPrivate) return undefined;
  const host = new URL(endpointUrl).hostname.replace(/^\[(.*)\]$/, '$1');
  let addresses: string[];
  try {
    addresses = isIP(host) ? [host] : await resolveAll(lookup, host, timeoutMs);
  } catch {
    return REFUSED_TARGET;
  }
  if (!addresses.length || addresses.some(isNonPublicAddress)) return REFUSED_TARGET;
  return undefined;
}

/** Every address `lookup` gives for `host`, or a rejection once `timeoutMs` has passed without. */
function resolveAll(lookup: LookupFunction, host: string, timeoutMs: number): Promise<string[]> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no answer for ${host} in ${timeoutMs} ms`)), timeoutMs);
    try {
      lookup(host, { all: true, order: 'verbatim' }, (err, addresses) => {
        clearTimeout(timer);
        if (err) reject(err);
        else resolve(Array.isArray(addresses) ? addresses.map((a) => a.address) : [addresses]);
      });
    } catch (err) {
      clearTimeout(timer);
      throw err;
    }
  });
}
