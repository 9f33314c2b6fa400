// Where a webhook may point (CONTRACT.md "Events" → Webhooks): http(s) URLs whose host is not a
// private, loopback or link-local address, neither as written nor as it resolves, unless
// SVC_WEBHOOK_ALLOW_PRIVATE=1. Checked when a webhook is registered (the route) and again before
// every delivery (actors/webhooks/send.ts), which then connects to the address it checked, so a
// name that resolves elsewhere a moment later (DNS rebinding) is never followed to a private one.
import { isIP } from 'node:net';
import { lookup } from 'node:dns/promises';
import ipaddr from 'ipaddr.js';

/** The longest URL a webhook may have. */
export const WEBHOOK_URL_MAX = 2048;
/** How long a name may take to resolve before the URL is refused (registration) or the attempt fails (delivery). */
export const RESOLVE_TIMEOUT_MS = 3000;

/** IPv4-compatible IPv6 addresses (::a.b.c.d, deprecated by RFC 4291 but still parsed and routed by some stacks). */
const IPV4_COMPATIBLE = ipaddr.parseCIDR('::/96');
/** The well-known NAT64 prefix (RFC 6052): the IPv4 address in the last 32 bits. 64:ff9b:1::/48 (local use, RFC 8215) is refused whole. */
const NAT64 = ipaddr.parseCIDR('64:ff9b::/96');

const ipv4Of = (hi: number, lo: number) =>
  new ipaddr.IPv4([hi >> 8, hi & 0xff, lo >> 8, lo & 0xff]);

/**
 * The IPv4 addresses an IPv6 address stands for (CONTRACT.md "Events" → Webhooks): IPv4-mapped
 * (::ffff:a.b.c.d) and IPv4-translated (::ffff:0:a.b.c.d), IPv4-compatible (::a.b.c.d), NAT64
 * (64:ff9b::a.b.c.d), 6to4 (2002:AABB:CCDD::, the address in bits 16-47) and Teredo (2001:0::/32:
 * the server in bits 32-63, the client inverted in the last 32). None for any other address.
 */
export function embeddedIPv4(a: ipaddr.IPv6): ipaddr.IPv4[] {
  const p = a.parts;
  switch (a.range()) {
    case 'ipv4Mapped':
    case 'rfc6145':
      return [ipv4Of(p[6], p[7])];
    case '6to4':
      return [ipv4Of(p[1], p[2])];
    case 'teredo':
      return [ipv4Of(p[2], p[3]), ipv4Of(p[6] ^ 0xffff, p[7] ^ 0xffff)];
    default:
      return a.match(NAT64) || a.match(IPV4_COMPATIBLE) ? [ipv4Of(p[6], p[7])] : [];
  }
}

/**
 * Whether `ip` is an address no webhook may reach (anything that is not an IP address counts as
 * one). An address is reachable only when ipaddr.js's table of special-purpose ranges has none for
 * it (`unicast`): IPv4 this-network, private (RFC 1918), shared (CGNAT), loopback, link-local,
 * protocol, documentation, benchmarking, multicast and reserved are refused, and so are IPv6
 * unspecified, loopback, unique-local, link-local, site-local, multicast, documentation, discard,
 * NAT64 local use and the other IETF assignments. An IPv6 address that embeds an IPv4 one
 * (embeddedIPv4) is judged by what it embeds: refused when any of those is.
 */
export function isPrivateAddress(ip: string): boolean {
  if (isIP(ip) === 0 || !ipaddr.isValid(ip)) return true;
  const a = ipaddr.parse(ip);
  if (a.kind() === 'ipv4') return a.range() !== 'unicast';
  const inner = embeddedIPv4(a as ipaddr.IPv6);
  if (inner.length) return inner.some((v4) => v4.range() !== 'unicast');
  return a.range() !== 'unicast';
}

export type ResolvedAddress = { address: string; family: 4 | 6 };
export type Resolver = (host: string) => Promise<ResolvedAddress[]>;

/** Every address of `host` (the system's resolver, as a connection would use it), or a failure after RESOLVE_TIMEOUT_MS. */
export const systemResolver: Resolver = async (host) => {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`resolving ${host} took longer than ${RESOLVE_TIMEOUT_MS} ms`)),
      RESOLVE_TIMEOUT_MS,
    );
    timer.unref();
  });
  try {
    const all = await Promise.race([lookup(host, { all: true, verbatim: true }), timeout]);
    return all.map((a) => ({ address: a.address, family: a.family === 6 ? 6 : 4 }));
  } finally {
    clearTimeout(timer);
  }
};

/**
 * The verdict on a webhook URL: `refused` with a sentence for the caller, or the URL with the
 * address to connect to (`address` undefined when private addresses are allowed: the connection
 * resolves the name itself).
 */
export type UrlVerdict =
  { ok: true; url: URL; address?: ResolvedAddress } | { ok: false; refused: string };

/** The URL's shape alone (scheme, credentials, length): a sentence when it is no webhook URL, else the parsed URL. */
export function urlShape(raw: string): URL | string {
  if (raw.length > WEBHOOK_URL_MAX) return `the URL is longer than ${WEBHOOK_URL_MAX} characters`;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return 'not an absolute URL';
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    return 'a webhook URL is http:// or https://';
  if (url.username || url.password) return 'a webhook URL carries no user name or password';
  if (!url.hostname) return 'the URL names no host';
  return url;
}

/**
 * Checks `raw`: its shape, then (unless `allowPrivate`) its host: an IP address as written, or every
 * address a name resolves to, must be public. The first checked address is the one to connect to.
 */
export async function checkWebhookUrl(
  raw: string,
  allowPrivate: boolean,
  resolve: Resolver = systemResolver,
): Promise<UrlVerdict> {
  const url = urlShape(raw);
  if (typeof url === 'string') return { ok: false, refused: url };
  if (allowPrivate) return { ok: true, url };
  const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  const family = isIP(host);
  if (family !== 0) {
    if (isPrivateAddress(host))
      return {
        ok: false,
        refused: `${host} is a private, loopback or link-local address (refused unless SVC_WEBHOOK_ALLOW_PRIVATE=1)`,
      };
    return { ok: true, url, address: { address: host, family: family === 6 ? 6 : 4 } };
  }
  let addresses: ResolvedAddress[];
  try {
    addresses = await resolve(host);
  } catch {
    return { ok: false, refused: `the host ${host} does not resolve` };
  }
  if (!addresses.length) return { ok: false, refused: `the host ${host} does not resolve` };
  const bad = addresses.find((a) => isPrivateAddress(a.address));
  if (bad)
    return {
      ok: false,
      refused: `the host ${host} resolves to ${bad.address}, a private, loopback or link-local address (refused unless SVC_WEBHOOK_ALLOW_PRIVATE=1)`,
    };
  return { ok: true, url, address: addresses[0] };
}
