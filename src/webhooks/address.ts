// Where a webhook may point (CONTRACT.md "Events" → Webhooks): http(s) URLs whose host is not a
// private, loopback or link-local address, neither as written nor as it resolves, unless
// SVC_WEBHOOK_ALLOW_PRIVATE=1. Checked when a webhook is registered (the route) and again before
// every delivery (actors/webhooks/send.ts), which then connects to the address it checked, so a
// name that resolves elsewhere a moment later (DNS rebinding) is never followed to a private one.
import { BlockList, isIP } from 'node:net';
import { lookup } from 'node:dns/promises';

/** The longest URL a webhook may have. */
export const WEBHOOK_URL_MAX = 2048;
/** How long a name may take to resolve before the URL is refused (registration) or the attempt fails (delivery). */
export const RESOLVE_TIMEOUT_MS = 3000;

/**
 * Addresses no webhook reaches: IPv4 this-network, private (RFC 1918), shared (CGNAT), loopback,
 * link-local, IETF protocol, documentation, benchmarking, multicast and reserved ranges; IPv6
 * unspecified, loopback, unique-local, link-local, site-local, multicast, documentation, discard
 * and NAT64 local-use. An IPv4-mapped IPv6 address (::ffff:a.b.c.d) is checked as its IPv4 one.
 */
const REFUSED = new BlockList();
for (const [net, prefix] of [
  ['0.0.0.0', 8], ['10.0.0.0', 8], ['100.64.0.0', 10], ['127.0.0.0', 8], ['169.254.0.0', 16], ['172.16.0.0', 12],
  ['192.0.0.0', 24], ['192.0.2.0', 24], ['192.168.0.0', 16], ['198.18.0.0', 15], ['198.51.100.0', 24], ['203.0.113.0', 24],
  ['224.0.0.0', 4], ['240.0.0.0', 4],
] as const) REFUSED.addSubnet(net, prefix, 'ipv4');
for (const [net, prefix] of [
  ['::', 128], ['::1', 128], ['fc00::', 7], ['fe80::', 10], ['fec0::', 10], ['ff00::', 8], ['2001:db8::', 32], ['100::', 64], ['64:ff9b:1::', 48],
] as const) REFUSED.addSubnet(net, prefix, 'ipv6');

/** Whether `ip` is an address no webhook may reach (anything that is not an IP address counts as one). */
export function isPrivateAddress(ip: string): boolean {
  const family = isIP(ip);
  if (family === 0) return true;
  return REFUSED.check(ip, family === 4 ? 'ipv4' : 'ipv6');
}

export type ResolvedAddress = { address: string; family: 4 | 6 };
export type Resolver = (host: string) => Promise<ResolvedAddress[]>;

/** Every address of `host` (the system's resolver, as a connection would use it), or a failure after RESOLVE_TIMEOUT_MS. */
export const systemResolver: Resolver = async (host) => {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`resolving ${host} took longer than ${RESOLVE_TIMEOUT_MS} ms`)), RESOLVE_TIMEOUT_MS);
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
export type UrlVerdict = { ok: true; url: URL; address?: ResolvedAddress } | { ok: false; refused: string };

/** The URL's shape alone (scheme, credentials, length): a sentence when it is no webhook URL, else the parsed URL. */
export function urlShape(raw: string): URL | string {
  if (raw.length > WEBHOOK_URL_MAX) return `the URL is longer than ${WEBHOOK_URL_MAX} characters`;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return 'not an absolute URL';
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return 'a webhook URL is http:// or https://';
  if (url.username || url.password) return 'a webhook URL carries no user name or password';
  if (!url.hostname) return 'the URL names no host';
  return url;
}

/**
 * Checks `raw`: its shape, then (unless `allowPrivate`) its host: an IP address as written, or every
 * address a name resolves to, must be public. The first checked address is the one to connect to.
 */
export async function checkWebhookUrl(raw: string, allowPrivate: boolean, resolve: Resolver = systemResolver): Promise<UrlVerdict> {
  const url = urlShape(raw);
  if (typeof url === 'string') return { ok: false, refused: url };
  if (allowPrivate) return { ok: true, url };
  const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  const family = isIP(host);
  if (family !== 0) {
    if (isPrivateAddress(host)) return { ok: false, refused: `${host} is a private, loopback or link-local address (refused unless SVC_WEBHOOK_ALLOW_PRIVATE=1)` };
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
  if (bad) return { ok: false, refused: `the host ${host} resolves to ${bad.address}, a private, loopback or link-local address (refused unless SVC_WEBHOOK_ALLOW_PRIVATE=1)` };
  return { ok: true, url, address: addresses[0] };
}
