/**
 * How both edges turn a webhook endpoint's host name into addresses: a dns.lookup-compatible
 * function that asks DNS through c-ares (`dns.promises.Resolver`) instead of getaddrinfo.
 *
 * node:dns `lookup` is getaddrinfo on libuv's thread pool, shared with file I/O (pino's writes),
 * crypto and zlib. A getaddrinfo whose name never gets an answer keeps its thread until the system
 * resolver gives up (resolv.conf(5) defaults: 5 s a try, 2 tries), and nothing cancels it, so a
 * partner whose DNS never answers could occupy every thread with a handful of attempts, and every
 * other partner's lookups and every file write would queue behind them. c-ares sends its queries on
 * its own sockets from the event loop: no thread is held, and A and AAAA go out side by side.
 *
 * Measured on Node 24.21 (c-ares 1.34.8, glibc, `hosts: files dns`, one nameserver):
 * - four FIFO opens blocked on a writer (the default pool of 4) stall node:dns `lookup` even of
 *   `localhost` and a `readFile` until released, while lookups through this module answer, and ten
 *   of them hanging on a silent server leave file reads and pbkdf2 free (host-resolver.test.ts).
 *   getaddrinfo itself could not be made to hang without pointing /etc/resolv.conf at a silent
 *   server, so its 10 s above are the manual's, not a measurement;
 * - against a silent server c-ares adapts each try's timeout to the server's history:
 *   `{timeout: 200, tries: 1}` gave up after 370 to 400 ms, `{timeout: 1000, tries: 2}` after 2.0
 *   to 3.0 s, Node's default Resolver after 22 s (4 tries). So the bound is our own deadline, and
 *   c-ares' two tries of half of it each only fit inside; queries cut off by it run on to their
 *   own end, holding a socket and a timer, never a thread;
 * - `Resolver#resolve4` does not read /etc/hosts: `localhost` and the hosts-file names get
 *   ENOTFOUND (1 ms) where `lookup` answers 127.0.0.1 from the file in under 1 ms. So names DNS
 *   does not know (ENOTFOUND or ENODATA for every family asked) go to node:dns `lookup` after all,
 *   as do names while no DNS server listens (ECONNREFUSED, 1 ms on a closed port: a laptop offline,
 *   a stopped stub resolver), since getaddrinfo reads the hosts file before any DNS. `localhost`
 *   goes there straight away (RFC 6761 §6.3), so it never depends on DNS at all;
 * - net.connect and undici call the lookup with `{ all: true, hints: ADDRCONFIG }`, and never for
 *   an IP literal.
 *
 * A timeout or a server failure is not a reason to fall back: it is an unresolvable host, reported
 * with getaddrinfo's code for it (EAI_AGAIN). The fallback can still hang (getaddrinfo asks DNS for
 * a name that is not in the hosts file, and an authoritative server may answer NXDOMAIN to one
 * query and nothing to the next), so at most two fallbacks run at once: they can hold half the
 * default pool, never all of it, and a lookup waiting for a slot fails at its deadline.
 */
import { lookup as dnsLookup, promises as dnsPromises } from 'node:dns';
import type { LookupAddress, LookupOptions } from 'node:dns';
import { isIP, type LookupFunction } from 'node:net';

/** The longest one lookup takes, DNS and fallback together, before its host counts as unresolvable. */
export const HOST_LOOKUP_TIMEOUT_MS = 3000;

/** Tries per query: one lost UDP packet is sent again; each try gets an even share of the bound. */
const DNS_TRIES = 2;

/** The most node:dns lookups (one pool thread each) the fallback runs at once: half the default 4. */
const MAX_FALLBACKS_IN_FLIGHT = 2;

/** c-ares codes for "DNS has nothing to say about this name": the hosts file may know it. */
const NOT_IN_DNS = new Set(['ENOTFOUND', 'ENODATA', 'ECONNREFUSED']);

/** The name that always means this machine (RFC 6761 §6.3), as the hosts file spells it. */
const LOCALHOST = /^localhost$/i;

/** How a host lookup is made; the defaults are the service's. */
export interface HostLookupOptions {
  /** DNS servers as `ip` or `ip:port`; by default those of /etc/resolv.conf. */
  servers?: readonly string[] | undefined;
  /** The bound of one lookup in ms (default HOST_LOOKUP_TIMEOUT_MS). */
  timeoutMs?: number | undefined;
  /** Where names DNS does not know go (default node:dns `lookup`, which reads the hosts file). */
  fallback?: LookupFunction | undefined;
}

/** One family's answer from DNS: addresses, or the error that came instead. */
type FamilyAnswer = LookupAddress[] | NodeJS.ErrnoException;

/**
 * A dns.lookup-compatible function resolving through c-ares within `timeoutMs`. It honours `all`,
 * `family` (0, 4, 6, 'IPv4', 'IPv6') and `order: 'ipv6first'`; otherwise IPv4 addresses come first.
 * `hints` only reach the fallback. It fails with code EAI_AGAIN when DNS times out or fails, and
 * with node:dns' own error when the fallback finds nothing.
 */
export function createHostLookup(options: HostLookupOptions = {}): LookupFunction {
  const timeoutMs = options.timeoutMs ?? HOST_LOOKUP_TIMEOUT_MS;
  const perTryMs = Math.max(1, Math.floor(timeoutMs / DNS_TRIES));
  let resolver: dnsPromises.Resolver | undefined;
  const dns = () => {
    if (resolver) return resolver;
    resolver = new dnsPromises.Resolver({ timeout: perTryMs, tries: DNS_TRIES, maxTimeout: perTryMs });
    if (options.servers) resolver.setServers(options.servers);
    return resolver;
  };
  const fallback = limitInFlight(options.fallback ?? dnsLookup, MAX_FALLBACKS_IN_FLIGHT);

  const resolveHost = async (hostname: string, lookupOptions: LookupOptions, deadline: AbortSignal) => {
    const literal = isIP(hostname);
    if (literal) return [{ address: hostname, family: literal }];
    if (LOCALHOST.test(hostname)) return fallback(hostname, lookupOptions, deadline);
    const answers = await Promise.all(
      familiesOf(lookupOptions.family).map((family) => query(dns(), hostname, family, deadline)),
    );
    const addresses = answers.flatMap((a) => (Array.isArray(a) ? a : []));
    if (addresses.length) return lookupOptions.order === 'ipv6first' ? ipv6First(addresses) : addresses;
    const errors = answers.filter((a): a is NodeJS.ErrnoException => !Array.isArray(a));
    if (errors.every((e) => NOT_IN_DNS.has(e.code ?? ''))) return fallback(hostname, lookupOptions, deadline);
    const failure = errors.find((e) => !NOT_IN_DNS.has(e.code ?? ''));
    throw unresolvable(hostname, failure);
  };

  return (hostname, lookupOptions, callback) => {
    resolveHost(hostname, lookupOptions, AbortSignal.timeout(timeoutMs)).then(
      (addresses) => {
        if (lookupOptions.all) return callback(null, addresses);
        const [first] = addresses;
        if (first) callback(null, first.address, first.family);
        else callback(unresolvable(hostname, undefined), '', 0);
      },
      (err: NodeJS.ErrnoException) => callback(err, '', 0),
    );
  };
}

/** The lookup both edges use by default: system DNS servers, HOST_LOOKUP_TIMEOUT_MS. */
export const lookupHost: LookupFunction = createHostLookup();

/** The address families a lookup asks DNS for. */
function familiesOf(family: LookupOptions['family']): (4 | 6)[] {
  if (family === 4 || family === 'IPv4') return [4];
  if (family === 6 || family === 'IPv6') return [6];
  return [4, 6];
}

/** One family's records, or the error (ETIMEOUT once `deadline` aborts); never rejects. */
async function query(
  resolver: dnsPromises.Resolver,
  hostname: string,
  family: 4 | 6,
  deadline: AbortSignal,
): Promise<FamilyAnswer> {
  const records = family === 4 ? resolver.resolve4(hostname) : resolver.resolve6(hostname);
  try {
    return (await untilAborted(records, deadline)).map((address) => ({ address, family }));
  } catch (err) {
    return err as NodeJS.ErrnoException;
  }
}

/** `lookup` as a promise of every address, with at most `max` calls running at once. */
function limitInFlight(lookup: LookupFunction, max: number) {
  let running = 0;
  const waiting = new Set<() => void>();
  const release = () => {
    running--;
    const [next] = waiting;
    if (next) next();
  };
  const acquire = (deadline: AbortSignal) =>
    new Promise<void>((resolve, reject) => {
      if (deadline.aborted) return reject(timedOut());
      if (running < max) return void (running++, resolve());
      const onAbort = () => (waiting.delete(start), reject(timedOut()));
      const start = () => {
        waiting.delete(start);
        deadline.removeEventListener('abort', onAbort);
        running++;
        resolve();
      };
      waiting.add(start);
      deadline.addEventListener('abort', onAbort, { once: true });
    });
  return async (hostname: string, options: LookupOptions, deadline: AbortSignal) => {
    try {
      await acquire(deadline);
    } catch (err) {
      throw unresolvable(hostname, err as NodeJS.ErrnoException);
    }
    const answer = new Promise<LookupAddress[]>((resolve, reject) => {
      try {
        lookup(hostname, { ...options, all: true }, (err, addresses) => {
          release();
          if (err) reject(err);
          else resolve(addresses as LookupAddress[]);
        });
      } catch (err) {
        release();
        throw err;
      }
    });
    return untilAborted(answer, deadline).catch((err: NodeJS.ErrnoException) => {
      throw err.code === 'ETIMEOUT' ? unresolvable(hostname, err) : err;
    });
  };
}

/** `promise`, or an ETIMEOUT rejection once `signal` aborts; a later rejection is not unhandled. */
function untilAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  promise.catch(() => undefined);
  if (signal.aborted) return Promise.reject(timedOut());
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(timedOut());
    signal.addEventListener('abort', onAbort, { once: true });
    void promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

/** The error of a lookup cut off by its deadline (c-ares' own code for a query that timed out). */
function timedOut(): NodeJS.ErrnoException {
  return Object.assign(new Error('no DNS answer in time'), { code: 'ETIMEOUT' });
}

/** An unresolvable host, with the code getaddrinfo gives for a DNS timeout or failure. */
function unresolvable(hostname: string, cause: NodeJS.ErrnoException | undefined): NodeJS.ErrnoException {
  const why = cause?.code ?? 'no address';
  return Object.assign(new Error(`${hostname} does not resolve (${why})`, { cause }), {
    code: 'EAI_AGAIN',
    hostname,
  });
}

/** The same addresses with IPv6 first. */
function ipv6First(addresses: LookupAddress[]): LookupAddress[] {
  return [...addresses.filter((a) => a.family === 6), ...addresses.filter((a) => a.family !== 6)];
}
