import {
  SERVER_STATUSES,
  type Location,
  type Network,
  type Server,
  type ServerPrivateNet,
  type ServerStatus,
} from './models.ts';

/**
 * Validation of response JSON. Readers take the JSON path for the message, so a shape error names the
 * field: `servers[3].id: expected an integer, got "abc"`. The client turns a {@link ShapeError} into an
 * `HcloudError` with code `invalid_response`.
 */
export class ShapeError extends Error {
  override readonly name = 'ShapeError';
}

type Json = Record<string, unknown>;

function describe(value: unknown): string {
  if (value === undefined) return 'missing';
  const text = JSON.stringify(value);
  return text.length > 40 ? `${text.slice(0, 40)}...` : text;
}

function fail(path: string, expected: string, value: unknown): never {
  throw new ShapeError(`${path}: expected ${expected}, got ${describe(value)}`);
}

export function object(value: unknown, path: string): Json {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) fail(path, 'an object', value);
  return value as Json;
}

function optionalObject(value: unknown, path: string): Json | null {
  return value === undefined || value === null ? null : object(value, path);
}

function integer(value: unknown, path: string): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value)) fail(path, 'an integer', value);
  return value;
}

function optionalInteger(value: unknown, path: string): number | null {
  return value === undefined || value === null ? null : integer(value, path);
}

function string(value: unknown, path: string): string {
  if (typeof value !== 'string') fail(path, 'a string', value);
  return value;
}

function optionalString(value: unknown, path: string): string | null {
  return value === undefined || value === null ? null : string(value, path);
}

/** A list; `null`/missing reads as empty (the API omits empty lists in places). */
function array(value: unknown, path: string): unknown[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) fail(path, 'an array', value);
  return value;
}

/** A list the response must have (e.g. `servers` of a list call): its absence means a wrong endpoint. */
export function requiredArray(value: unknown, path: string): unknown[] {
  if (!Array.isArray(value)) fail(path, 'an array', value);
  return value;
}

function labels(value: unknown, path: string): Record<string, string> {
  const result: Record<string, string> = {};
  const map = optionalObject(value, path);
  if (map)
    for (const [key, labelValue] of Object.entries(map)) result[key] = string(labelValue, `${path}.${key}`);
  return result;
}

function status(value: unknown, path: string): ServerStatus {
  const text = string(value, path);
  return (SERVER_STATUSES as readonly string[]).includes(text) ? (text as ServerStatus) : 'unknown';
}

export function parseLocation(value: unknown, path: string): Location {
  const json = object(value, path);
  return {
    id: optionalInteger(json.id, `${path}.id`),
    name: string(json.name, `${path}.name`),
    description: optionalString(json.description, `${path}.description`),
    country: optionalString(json.country, `${path}.country`),
    city: optionalString(json.city, `${path}.city`),
    network_zone: optionalString(json.network_zone, `${path}.network_zone`),
  };
}

function parseIp(value: unknown, path: string): { ip: string } | null {
  const json = optionalObject(value, path);
  return json ? { ip: string(json.ip, `${path}.ip`) } : null;
}

function parsePrivateNet(value: unknown, path: string): ServerPrivateNet {
  const json = object(value, path);
  return {
    network: integer(json.network, `${path}.network`),
    ip: optionalString(json.ip, `${path}.ip`),
    alias_ips: array(json.alias_ips, `${path}.alias_ips`).map((ip, i) =>
      string(ip, `${path}.alias_ips[${i}]`),
    ),
    mac_address: optionalString(json.mac_address, `${path}.mac_address`),
  };
}

export function parseServer(value: unknown, path: string): Server {
  const json = object(value, path);
  const serverType = optionalObject(json.server_type, `${path}.server_type`);
  const publicNet = optionalObject(json.public_net, `${path}.public_net`);
  return {
    id: integer(json.id, `${path}.id`),
    name: string(json.name, `${path}.name`),
    status: status(json.status, `${path}.status`),
    created: optionalString(json.created, `${path}.created`),
    server_type: serverType ? { name: string(serverType.name, `${path}.server_type.name`) } : null,
    location:
      json.location === undefined || json.location === null
        ? null
        : parseLocation(json.location, `${path}.location`),
    public_net: {
      ipv4: parseIp(publicNet?.ipv4, `${path}.public_net.ipv4`),
      ipv6: parseIp(publicNet?.ipv6, `${path}.public_net.ipv6`),
    },
    private_net: array(json.private_net, `${path}.private_net`).map((net, i) =>
      parsePrivateNet(net, `${path}.private_net[${i}]`),
    ),
    labels: labels(json.labels, `${path}.labels`),
  };
}

export function parseNetwork(value: unknown, path: string): Network {
  const json = object(value, path);
  return {
    id: integer(json.id, `${path}.id`),
    name: string(json.name, `${path}.name`),
    ip_range: optionalString(json.ip_range, `${path}.ip_range`),
    labels: labels(json.labels, `${path}.labels`),
  };
}

/** `meta.pagination.next_page` of a list response; `null` when absent (no `meta` promises no more pages). */
export function nextPage(body: Json): number | null {
  const meta = optionalObject(body.meta, 'meta');
  const pagination = optionalObject(meta?.pagination, 'meta.pagination');
  return optionalInteger(pagination?.next_page, 'meta.pagination.next_page');
}
