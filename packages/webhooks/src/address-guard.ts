import { promises as dns, type LookupAddress, type LookupOptions } from 'node:dns';
import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';

/**
 * The guard against server-side request forgery: a webhook URL may only reach public unicast
 * addresses. Loopback, private, link-local, multicast, unspecified and every other special-use
 * range (carrier-grade NAT, unique-local IPv6, reserved, documentation, ...) are refused, for
 * IPv4, IPv6 and IPv4-mapped IPv6 alike (::ffff:127.0.0.1 is 127.0.0.1). Names are resolved and
 * every answer checked, at creation and again at each delivery, through the lookup the
 * connection itself uses (guardedLookup), so a DNS answer that changes between the check and
 * the connection cannot lead it elsewhere.
 */

/** Resolves a name to all its addresses (dns.lookup, /etc/hosts included); tests inject their own. */
export type Resolver = (hostname: string) => Promise<LookupAddress[]>;

export const systemResolver: Resolver = (hostname) => dns.lookup(hostname, { all: true, verbatim: true });

export interface AddressPolicy {
  /** WEBHOOK_ALLOW_PRIVATE_NETWORKS=1: any address (tests and local development only). */
  allowPrivate: boolean;
  resolve?: Resolver;
}

/** Why an address may not be reached, or null when it may: the name of its range. */
export function forbiddenRange(address: string): string | null {
  if (!ipaddr.isValid(address)) return 'not an IP address';
  const parsed = ipaddr.process(address); // an IPv4-mapped IPv6 address becomes its IPv4 address
  const range = parsed.range();
  return range === 'unicast' ? null : range;
}

/** The setting that would let a refused URL through (for local development only). */
export type AllowingSetting = 'WEBHOOK_ALLOW_HTTP' | 'WEBHOOK_ALLOW_PRIVATE_NETWORKS';

export class AddressRefused extends Error {
  /**
   * `setting`: the setting that would allow the URL (an http URL, a non-public address), or null
   * when none would; outside production a message to a person may name it.
   */
  constructor(
    message: string,
    readonly setting: AllowingSetting | null = null,
  ) {
    super(message);
    this.name = 'AddressRefused';
  }
}

/** The host of a URL as a bare name or address (an IPv6 literal without its brackets). */
export function hostOf(url: URL): string {
  return url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
}

/**
 * The addresses `host` resolves to, each checked; throws AddressRefused when any is refused (or
 * the name does not resolve). An IP literal is checked as it is.
 */
export async function checkedAddresses(host: string, policy: AddressPolicy): Promise<LookupAddress[]> {
  const family = isIP(host);
  const addresses = family !== 0 ? [{ address: host, family }] : await resolveOrRefuse(host, policy.resolve ?? systemResolver);
  if (addresses.length === 0) throw new AddressRefused(`${host} does not resolve to any address`);
  if (!policy.allowPrivate) {
    for (const { address } of addresses) {
      const range = forbiddenRange(address);
      if (!range) continue;
      // A name's answer is not told back (extensions-2.md 2): which internal address, or which
      // kind, a name resolves to inside our network is no business of the caller's.
      const what = family !== 0 ? `${host} is a ${range} address` : `${host} resolves to a non-public address`;
      throw new AddressRefused(`${what}; webhooks may only reach public addresses`, 'WEBHOOK_ALLOW_PRIVATE_NETWORKS');
    }
  }
  return addresses;
}

async function resolveOrRefuse(host: string, resolve: Resolver): Promise<LookupAddress[]> {
  try {
    return await resolve(host);
  } catch (error) {
    throw new AddressRefused(`${host} could not be resolved (${(error as NodeJS.ErrnoException).code ?? String(error)})`);
  }
}

type LookupCallback = (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/**
 * A `lookup` for http.request (got's `lookup`): resolves and checks like checkedAddresses and
 * hands the connection only the addresses it checked.
 */
export function guardedLookup(policy: AddressPolicy) {
  return (hostname: string, options: LookupOptions | number | LookupCallback, callback?: LookupCallback): void => {
    const done = (typeof options === 'function' ? options : callback)!;
    const opts: LookupOptions = typeof options === 'object' ? options : typeof options === 'number' ? { family: options } : {};
    checkedAddresses(hostname, policy).then(
      (addresses) => {
        const wanted = opts.family === 4 || opts.family === 6 ? addresses.filter((a) => a.family === opts.family) : addresses;
        if (wanted.length === 0) {
          done(Object.assign(new Error(`${hostname} has no IPv${opts.family} address`), { code: 'ENOTFOUND' }), '', 0);
          return;
        }
        if (opts.all) done(null, wanted);
        else done(null, wanted[0].address, wanted[0].family);
      },
      (error: Error) => done(Object.assign(error, { code: 'EADDRREFUSED' }), '', 0),
    );
  };
}
