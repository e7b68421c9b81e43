/**
 * The fake's state, stored in the Hetzner Cloud wire format (snake_case JSON, exactly what the API returns),
 * plus the state API tests use to add, change and delete servers and networks.
 */

/** Server statuses the real API documents; the `status` query filter accepts exactly these. */
export const FAKE_HCLOUD_SERVER_STATUSES = [
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
export type FakeHcloudServerStatus = (typeof FAKE_HCLOUD_SERVER_STATUSES)[number];

export interface FakeHcloudLocation {
  id: number;
  name: string;
  description: string;
  country: string;
  city: string;
  latitude: number;
  longitude: number;
  network_zone: string;
}

export interface FakeHcloudServerType {
  id: number;
  name: string;
  description: string;
  cores: number;
  memory: number;
  disk: number;
  cpu_type: 'shared' | 'dedicated';
  architecture: 'x86' | 'arm';
}

export interface FakeHcloudIpv4 {
  id: number;
  ip: string;
  blocked: boolean;
  dns_ptr: string;
}

export interface FakeHcloudIpv6 {
  id: number;
  /** A /64 CIDR, e.g. `2a01:4f8:c012:1::/64`. */
  ip: string;
  blocked: boolean;
  dns_ptr: { ip: string; dns_ptr: string }[];
}

export interface FakeHcloudPrivateNet {
  /** The network's id. */
  network: number;
  ip: string;
  alias_ips: string[];
  mac_address: string;
}

/** A server as `GET /v1/servers` returns it (no `datacenter`: removed from the API in 2026). */
export interface FakeHcloudServer {
  id: number;
  name: string;
  status: FakeHcloudServerStatus;
  created: string;
  server_type: FakeHcloudServerType;
  location: FakeHcloudLocation;
  public_net: {
    ipv4: FakeHcloudIpv4 | null;
    ipv6: FakeHcloudIpv6 | null;
    floating_ips: number[];
    firewalls: { id: number; status: string }[];
  };
  private_net: FakeHcloudPrivateNet[];
  labels: Record<string, string>;
  image: { id: number; name: string; type: string; os_flavor: string } | null;
  protection: { delete: boolean; rebuild: boolean };
  locked: boolean;
  rescue_enabled: boolean;
  backup_window: string | null;
  included_traffic: number;
  outgoing_traffic: number | null;
  ingoing_traffic: number | null;
  primary_disk_size: number;
  volumes: number[];
  load_balancers: number[];
  placement_group: null;
  iso: null;
}

/**
 * What `servers.add` and `servers.update` accept: any wire field, with shortcuts: `server_type` and
 * `location` may be a name (`'cx32'`, `'hel1'`); `public_net` keys given replace only those keys
 * (`{ ipv4: null }` removes the IPv4 and keeps the IPv6).
 */
export interface FakeHcloudServerInput {
  id?: number;
  name?: string;
  status?: FakeHcloudServerStatus;
  created?: string;
  server_type?: string | FakeHcloudServerType;
  location?: string | FakeHcloudLocation;
  public_net?: Partial<FakeHcloudServer['public_net']>;
  private_net?: FakeHcloudPrivateNet[];
  labels?: Record<string, string>;
  protection?: FakeHcloudServer['protection'];
}

export interface FakeHcloudNetwork {
  id: number;
  name: string;
  ip_range: string;
  subnets: { type: string; ip_range: string; network_zone: string; gateway: string }[];
  routes: { destination: string; gateway: string }[];
  /** Ids of the servers attached (computed from the servers' `private_net` when served). */
  servers: number[];
  load_balancers: number[];
  labels: Record<string, string>;
  created: string;
  protection: { delete: boolean };
  expose_routes_to_vswitch: boolean;
}

export interface FakeHcloudNetworkInput {
  id?: number;
  name?: string;
  ip_range?: string;
  labels?: Record<string, string>;
}

/** The locations the fake serves, as `GET /v1/locations` returns them. */
export const FAKE_HCLOUD_LOCATIONS: readonly FakeHcloudLocation[] = [
  {
    id: 1,
    name: 'fsn1',
    description: 'Falkenstein DC Park 1',
    country: 'DE',
    city: 'Falkenstein',
    latitude: 50.47612,
    longitude: 12.370071,
    network_zone: 'eu-central',
  },
  {
    id: 2,
    name: 'nbg1',
    description: 'Nuremberg DC Park 1',
    country: 'DE',
    city: 'Nuremberg',
    latitude: 49.452102,
    longitude: 11.076665,
    network_zone: 'eu-central',
  },
  {
    id: 3,
    name: 'hel1',
    description: 'Helsinki DC Park 1',
    country: 'FI',
    city: 'Helsinki',
    latitude: 60.169855,
    longitude: 24.938379,
    network_zone: 'eu-central',
  },
  {
    id: 4,
    name: 'ash',
    description: 'Ashburn, VA',
    country: 'US',
    city: 'Ashburn, VA',
    latitude: 39.045821,
    longitude: -77.487073,
    network_zone: 'us-east',
  },
  {
    id: 5,
    name: 'hil',
    description: 'Hillsboro, OR',
    country: 'US',
    city: 'Hillsboro, OR',
    latitude: 45.54222,
    longitude: -122.951924,
    network_zone: 'us-west',
  },
  {
    id: 6,
    name: 'sin',
    description: 'Singapore',
    country: 'SG',
    city: 'Singapore',
    latitude: 1.283333,
    longitude: 103.833333,
    network_zone: 'ap-southeast',
  },
];

const serverTypes: readonly FakeHcloudServerType[] = [
  {
    id: 104,
    name: 'cx22',
    description: 'CX22',
    cores: 2,
    memory: 4,
    disk: 40,
    cpu_type: 'shared',
    architecture: 'x86',
  },
  {
    id: 105,
    name: 'cx32',
    description: 'CX32',
    cores: 4,
    memory: 8,
    disk: 80,
    cpu_type: 'shared',
    architecture: 'x86',
  },
  {
    id: 106,
    name: 'cx42',
    description: 'CX42',
    cores: 8,
    memory: 16,
    disk: 160,
    cpu_type: 'shared',
    architecture: 'x86',
  },
  {
    id: 45,
    name: 'cax11',
    description: 'CAX11',
    cores: 2,
    memory: 4,
    disk: 40,
    cpu_type: 'shared',
    architecture: 'arm',
  },
  {
    id: 96,
    name: 'ccx13',
    description: 'CCX13 Dedicated CPU',
    cores: 2,
    memory: 8,
    disk: 80,
    cpu_type: 'dedicated',
    architecture: 'x86',
  },
];

function location(nameOrLocation: string | FakeHcloudLocation): FakeHcloudLocation {
  if (typeof nameOrLocation !== 'string') return structuredClone(nameOrLocation);
  const found = FAKE_HCLOUD_LOCATIONS.find((l) => l.name === nameOrLocation);
  if (!found)
    throw new Error(
      `fake hcloud: unknown location '${nameOrLocation}' (known: ${FAKE_HCLOUD_LOCATIONS.map((l) => l.name).join(', ')})`,
    );
  return structuredClone(found);
}

function serverType(nameOrType: string | FakeHcloudServerType): FakeHcloudServerType {
  if (typeof nameOrType !== 'string') return structuredClone(nameOrType);
  const found = serverTypes.find((t) => t.name === nameOrType);
  // Unknown names are allowed (new types appear all the time); derive a plausible object.
  return structuredClone(
    found ?? {
      id: 9000,
      name: nameOrType,
      description: nameOrType.toUpperCase(),
      cores: 2,
      memory: 4,
      disk: 40,
      cpu_type: 'shared',
      architecture: 'x86',
    },
  );
}

/** The servers of the fake project, ordered by id like the API's default listing. */
export class FakeHcloudServers {
  readonly #servers = new Map<number, FakeHcloudServer>();
  readonly #now: () => number;
  #nextId = 100_001;

  constructor(now: () => number) {
    this.#now = now;
  }

  /**
   * Adds a server with realistic defaults: next id, name `server-<id>`, `running`, `cx22` in `nbg1`
   * (eu-central), a public IPv4 and an IPv6 /64 derived from the id, no private networks, no labels.
   */
  add(input: FakeHcloudServerInput = {}): FakeHcloudServer {
    const id = input.id ?? this.#nextId;
    if (this.#servers.has(id)) throw new Error(`fake hcloud: server ${id} already exists`);
    this.#nextId = Math.max(this.#nextId, id + 1);
    const n = id % 65_536;
    const ipv4 = `5.75.${(n >> 8) & 255}.${n & 255}`;
    const server: FakeHcloudServer = {
      id,
      name: `server-${id}`,
      status: 'running',
      created: new Date(this.#now()).toISOString().replace(/\.\d{3}Z$/, '+00:00'),
      server_type: serverType('cx22'),
      location: location('nbg1'),
      public_net: {
        ipv4: {
          id: id + 50_000_000,
          ip: ipv4,
          blocked: false,
          dns_ptr: `static.${ipv4.split('.').reverse().join('.')}.clients.your-server.de`,
        },
        ipv6: { id: id + 60_000_000, ip: `2a01:4f8:c0c:${n.toString(16)}::/64`, blocked: false, dns_ptr: [] },
        floating_ips: [],
        firewalls: [],
      },
      private_net: [],
      labels: {},
      image: { id: 161_547_269, name: 'ubuntu-24.04', type: 'system', os_flavor: 'ubuntu' },
      protection: { delete: false, rebuild: false },
      locked: false,
      rescue_enabled: false,
      backup_window: null,
      included_traffic: 21_990_232_555_520,
      outgoing_traffic: 0,
      ingoing_traffic: 0,
      primary_disk_size: 40,
      volumes: [],
      load_balancers: [],
      placement_group: null,
      iso: null,
    };
    applyInput(server, input);
    this.#servers.set(id, server);
    return structuredClone(server);
  }

  /** Changes fields of an existing server (same shapes as `add`). */
  update(id: number, patch: FakeHcloudServerInput): FakeHcloudServer {
    const server = this.#servers.get(id);
    if (!server) throw new Error(`fake hcloud: no server ${id}`);
    if (patch.id !== undefined && patch.id !== id) throw new Error('fake hcloud: a server id cannot change');
    applyInput(server, patch);
    return structuredClone(server);
  }

  /** Removes a server; `false` when it did not exist. */
  delete(id: number): boolean {
    return this.#servers.delete(id);
  }

  /** A copy of the server, or `undefined`. */
  get(id: number): FakeHcloudServer | undefined {
    const server = this.#servers.get(id);
    return server ? structuredClone(server) : undefined;
  }

  /** Copies of all servers, by id. */
  list(): FakeHcloudServer[] {
    return this.#sorted().map((server) => structuredClone(server));
  }

  /** Removes every server. */
  clear(): void {
    this.#servers.clear();
  }

  /** The live objects, by id (the HTTP layer serialises them; tests get copies). */
  #sorted(): FakeHcloudServer[] {
    return [...this.#servers.values()].sort((a, b) => a.id - b.id);
  }

  /** @internal used by the HTTP layer. */
  snapshot(): readonly FakeHcloudServer[] {
    return this.#sorted();
  }
}

function applyInput(server: FakeHcloudServer, input: FakeHcloudServerInput): void {
  if (input.name !== undefined) server.name = input.name;
  if (input.status !== undefined) server.status = input.status;
  if (input.created !== undefined) server.created = input.created;
  if (input.server_type !== undefined) server.server_type = serverType(input.server_type);
  if (input.location !== undefined) server.location = location(input.location);
  if (input.public_net !== undefined)
    server.public_net = { ...server.public_net, ...structuredClone(input.public_net) };
  if (input.private_net !== undefined) server.private_net = structuredClone(input.private_net);
  if (input.labels !== undefined) server.labels = { ...input.labels };
  if (input.protection !== undefined) server.protection = { ...input.protection };
}

/** The networks of the fake project. */
export class FakeHcloudNetworks {
  readonly #networks = new Map<number, FakeHcloudNetwork>();
  readonly #now: () => number;
  #nextId = 4_001;

  constructor(now: () => number) {
    this.#now = now;
  }

  /** Adds a network (defaults: next id, name `network-<id>`, `10.0.0.0/16` with one eu-central subnet). */
  add(input: FakeHcloudNetworkInput = {}): FakeHcloudNetwork {
    const id = input.id ?? this.#nextId;
    if (this.#networks.has(id)) throw new Error(`fake hcloud: network ${id} already exists`);
    this.#nextId = Math.max(this.#nextId, id + 1);
    const ipRange = input.ip_range ?? '10.0.0.0/16';
    const network: FakeHcloudNetwork = {
      id,
      name: input.name ?? `network-${id}`,
      ip_range: ipRange,
      subnets: [
        {
          type: 'cloud',
          ip_range: ipRange.replace(/\/\d+$/, '/24'),
          network_zone: 'eu-central',
          gateway: ipRange.replace(/\.0\/\d+$/, '.1'),
        },
      ],
      routes: [],
      servers: [],
      load_balancers: [],
      labels: { ...input.labels },
      created: new Date(this.#now()).toISOString().replace(/\.\d{3}Z$/, '+00:00'),
      protection: { delete: false },
      expose_routes_to_vswitch: false,
    };
    this.#networks.set(id, network);
    return structuredClone(network);
  }

  delete(id: number): boolean {
    return this.#networks.delete(id);
  }

  get(id: number): FakeHcloudNetwork | undefined {
    const network = this.#networks.get(id);
    return network ? structuredClone(network) : undefined;
  }

  list(): FakeHcloudNetwork[] {
    return [...this.#networks.values()]
      .sort((a, b) => a.id - b.id)
      .map((network) => structuredClone(network));
  }
}
