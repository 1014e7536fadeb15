/**
 * The key a client is limited by: its IPv4 address, or the /64 network of an IPv6 address (one
 * subscriber usually holds a whole /64, so counting single IPv6 addresses would let it rotate
 * through 2^64 of them). IPv4-mapped IPv6 (`::ffff:192.0.2.1`) counts as the IPv4 address.
 */
import ipaddr from 'ipaddr.js';

export function clientAddressKey(address: string | undefined): string {
  if (!address) return 'unknown';
  const bare = address.replace(/%.*$/, '');
  if (!ipaddr.isValid(bare)) return `other:${bare}`;
  let parsed = ipaddr.parse(bare);
  if (parsed.kind() === 'ipv6' && (parsed as ipaddr.IPv6).isIPv4MappedAddress()) parsed = (parsed as ipaddr.IPv6).toIPv4Address();
  if (parsed.kind() === 'ipv4') return parsed.toString();
  const parts = (parsed as ipaddr.IPv6).parts.slice(0, 4);
  return `${parts.map((p) => p.toString(16)).join(':')}::/64`;
}
