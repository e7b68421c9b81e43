/** Small IP helpers: enough to derive the server's IPv6 host address and to compare addresses. */
import { isIPv4, isIPv6 } from 'node:net';

/** Expands an IPv6 address (no zone, optional trailing IPv4 part) into its 8 16-bit groups. */
function ipv6Groups(address: string): number[] {
  let text = address;
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (dotted?.[1] !== undefined) {
    const [a = 0, b = 0, c = 0, d = 0] = dotted[1].split('.').map(Number);
    text = `${text.slice(0, -dotted[1].length)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head = '', tail] = text.split('::');
  const parse = (part: string): number[] => (part === '' ? [] : part.split(':').map((g) => parseInt(g, 16)));
  const left = parse(head);
  const right = tail === undefined ? [] : parse(tail);
  const zeros = tail === undefined ? 0 : 8 - left.length - right.length;
  return [...left, ...Array<number>(zeros).fill(0), ...right];
}

/** RFC 5952 text: lower case, no leading zeros, the longest run (>= 2) of zero groups as `::`. */
function formatIpv6(groups: readonly number[]): string {
  let bestStart = -1;
  let bestLength = 1;
  for (let i = 0; i < groups.length;) {
    if (groups[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < groups.length && groups[j] === 0) j++;
    if (j - i > bestLength) {
      bestStart = i;
      bestLength = j - i;
    }
    i = j;
  }
  const hex = groups.map((g) => g.toString(16));
  if (bestStart < 0) return hex.join(':');
  return `${hex.slice(0, bestStart).join(':')}::${hex.slice(bestStart + bestLength).join(':')}`;
}

/**
 * The address HCCM reports for a server's IPv6 network: the network address with the last bit set
 * (`2001:db8:1234::/64` -> `2001:db8:1234::1`). `undefined` for anything that is not an IPv6 CIDR/address.
 */
export function ipv6HostAddress(cidr: string): string | undefined {
  const address = cidr.split('/')[0] ?? '';
  if (!isIPv6(address)) return undefined;
  const groups = ipv6Groups(address);
  groups[7] = (groups[7] ?? 0) | 1;
  return formatIpv6(groups);
}

/** A canonical text for comparing IPs (`2001:DB8::0:1` equals `2001:db8::1`); `undefined` if not an IP. */
export function canonicalIp(text: string): string | undefined {
  const trimmed = text.trim();
  if (isIPv4(trimmed)) return trimmed.split('.').map(Number).join('.');
  if (isIPv6(trimmed) && !trimmed.includes('%')) return formatIpv6(ipv6Groups(trimmed.toLowerCase()));
  return undefined;
}
