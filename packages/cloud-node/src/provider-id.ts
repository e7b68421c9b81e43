/**
 * `spec.providerID` classification. Only `hcloud://<decimal id>` is ours; every other value belongs to
 * someone else (another cloud, Hetzner Robot via `hrobot://` or the legacy `hcloud://bm-`) and such a
 * Node is never modified or deleted: HCCM users lost bare-metal and foreign Nodes to over-eager deletes.
 */

export type ProviderId =
  /** Not set yet: the Node controller may set it during initialisation. */
  | { kind: 'unset' }
  | { kind: 'hcloud'; serverID: number }
  /** `hrobot://<n>` or `hcloud://bm-<n>`: a Robot (dedicated) server, not served here. */
  | { kind: 'robot'; raw: string }
  /** Anything else, including a malformed `hcloud://` value. */
  | { kind: 'foreign'; raw: string };

const HCLOUD_PREFIX = 'hcloud://';

export function parseProviderId(raw: string | undefined | null): ProviderId {
  if (raw === undefined || raw === null || raw === '') return { kind: 'unset' };
  if (raw.startsWith('hrobot://') || raw.startsWith(`${HCLOUD_PREFIX}bm-`)) return { kind: 'robot', raw };
  if (raw.startsWith(HCLOUD_PREFIX)) {
    const digits = raw.slice(HCLOUD_PREFIX.length);
    const id = Number(digits);
    // Leading zeros or an id past 2^53 would not round-trip: not a value this controller wrote.
    if (/^[1-9]\d*$/.test(digits) && Number.isSafeInteger(id)) return { kind: 'hcloud', serverID: id };
  }
  return { kind: 'foreign', raw };
}

export function formatProviderId(serverID: number): string {
  return `${HCLOUD_PREFIX}${serverID}`;
}
