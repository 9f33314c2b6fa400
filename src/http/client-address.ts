// Who the client is, by address (CONTRACT.md "Several front ends": the login throttles and the
// per-address limits must see the real client behind a balancer, and never a header the client
// wrote). The peer's own address, unless the peer is one of SVC_TRUSTED_PROXIES: then the
// X-Forwarded-For hops are read from the right (each proxy appends the address it received from),
// skipping trusted proxies, and the first hop that is not one is the client. A hop that is not an
// address ends the walk at the proxy that wrote it: nothing to the left of it was written by a
// trusted party.
import ipaddr from 'ipaddr.js';

/** Addresses and networks (CIDR) whose X-Forwarded-For is believed. */
export type TrustedProxies = readonly [ipaddr.IPv4 | ipaddr.IPv6, number][];

/** An address in a canonical form (an IPv4-mapped IPv6 address as IPv4), or undefined when it is not one. */
function parse(text: string): ipaddr.IPv4 | ipaddr.IPv6 | undefined {
  const t = text.trim().replace(/^\[(.*)\]$/, '$1');
  if (!ipaddr.isValid(t)) return undefined;
  return ipaddr.process(t);
}

/** SVC_TRUSTED_PROXIES: comma-separated addresses or networks; throws on one that is neither. */
export function parseTrustedProxies(list: string | undefined): TrustedProxies {
  const out: [ipaddr.IPv4 | ipaddr.IPv6, number][] = [];
  for (const item of (list ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)) {
    if (item.includes('/')) {
      if (!ipaddr.isValidCIDR(item))
        throw new Error(`not an address or network: ${JSON.stringify(item)}`);
      const [addr, bits] = ipaddr.parseCIDR(item);
      // An IPv4-mapped network is its IPv4 network (peers are compared in their canonical form).
      out.push(
        addr.kind() === 'ipv6' && (addr as ipaddr.IPv6).isIPv4MappedAddress() && bits >= 96
          ? [(addr as ipaddr.IPv6).toIPv4Address(), bits - 96]
          : [addr, bits],
      );
    } else {
      const addr = parse(item);
      if (!addr) throw new Error(`not an address or network: ${JSON.stringify(item)}`);
      out.push([addr, addr.kind() === 'ipv4' ? 32 : 128]);
    }
  }
  return out;
}

const isTrusted = (addr: ipaddr.IPv4 | ipaddr.IPv6, trusted: TrustedProxies) =>
  trusted.some(([net, bits]) => net.kind() === addr.kind() && addr.match(net, bits));

/**
 * The client's address: `peer` (the socket's, as uWS writes it), or behind trusted proxies the
 * address X-Forwarded-For (`forwardedFor`, every such header joined by commas) names for it.
 */
export function clientAddress(
  peer: string,
  forwardedFor: string | undefined,
  trusted: TrustedProxies,
): string {
  if (!trusted.length || forwardedFor === undefined) return peer;
  let current = parse(peer);
  if (!current || !isTrusted(current, trusted)) return peer;
  const hops = forwardedFor.split(',');
  for (let i = hops.length - 1; i >= 0; i--) {
    const hop = parse(hops[i]);
    if (!hop) break; // not written by a trusted proxy: the last trusted one's view stands
    current = hop;
    if (!isTrusted(hop, trusted)) break;
  }
  // IPv6 as eight groups (limits.ts addressKey counts its first four: the /64).
  return current.kind() === 'ipv6'
    ? (current as ipaddr.IPv6).toNormalizedString()
    : current.toString();
}
