/**
 * The typed models: only what the controllers use, with the API's own (snake_case) field names so the
 * Hetzner API reference applies verbatim. Everything the API may omit or null is `| null` (or an empty
 * array/object) here, so callers handle it at compile time instead of meeting a TypeError at run time.
 */

export const SERVER_STATUSES = [
  'initializing',
  'starting',
  'running',
  'stopping',
  'off',
  'deleting',
  'migrating',
  'rebuilding',
  'unknown',
] as const;

/** A status the API does not document (yet) is reported as `unknown`. */
export type ServerStatus = (typeof SERVER_STATUSES)[number];

export interface Location {
  /** `null` only if the API omitted it. */
  id: number | null;
  /** e.g. `nbg1`, `fsn1`, `hel1`, `ash`, `hil`, `sin`. */
  name: string;
  description: string | null;
  country: string | null;
  city: string | null;
  /** e.g. `eu-central`, `us-east`. */
  network_zone: string | null;
}

export interface ServerPublicNet {
  /** `null` for servers created without a public IPv4. */
  ipv4: { ip: string } | null;
  /** `ip` is the server's /64 as CIDR (`2a01:4f8:c0c:1::/64`); `null` without public IPv6. */
  ipv6: { ip: string } | null;
}

export interface ServerPrivateNet {
  /** The network's id. */
  network: number;
  /** `null` if the API omitted it (e.g. while attaching). */
  ip: string | null;
  alias_ips: string[];
  mac_address: string | null;
}

export interface Server {
  /** int64 in the API; the client rejects ids beyond `Number.MAX_SAFE_INTEGER` rather than round them. */
  id: number;
  name: string;
  status: ServerStatus;
  /** ISO 8601 timestamp. */
  created: string | null;
  server_type: { name: string } | null;
  /**
   * Top-level `location` of the server. (The `datacenter` object that used to carry it was removed from
   * server responses in 2026 and is ignored.)
   */
  location: Location | null;
  /** Missing `public_net` reads as both families `null`. */
  public_net: ServerPublicNet;
  private_net: ServerPrivateNet[];
  labels: Record<string, string>;
}

export interface Network {
  id: number;
  name: string;
  /** e.g. `10.0.0.0/16`. */
  ip_range: string | null;
  labels: Record<string, string>;
}
