/**
 * The generator's options turned into the variables every template gets (the contract the chart, e2e
 * and package templates share), or one line saying which option is wrong and what is expected. Pure:
 * no file system, so each rule is unit-tested on its own.
 */

/** The options as Nx passes them (schema.json); flags arrive camel-cased. */
export interface ControllerOptions {
  name: string;
  group: string;
  /** `--api-version`: the kind's version. Nx's command line keeps `--version` for itself. */
  apiVersion: string;
  kind: string;
  namespaced?: boolean;
  clusterScoped?: boolean;
  /** Comma-separated: built-in kinds (`Pod`) or `group/version/Kind`. */
  owns?: string;
  plural?: string;
  shortName?: string;
  /** Only write the files and link the library chart: no `pnpm install`, no `pnpm generate` after. */
  skipInstall?: boolean;
}

/** A kind the controller owns: its objects' changes reconcile their owner. */
export interface OwnedKind {
  kind: string;
  /** `''` for the core group. */
  group: string;
  version: string;
  plural: string;
  /** `v1` for the core group, else `group/version`. */
  apiVersion: string;
}

export interface TemplateVariables {
  /** DNS label: the package, chart, image, Lease and field manager name. */
  name: string;
  packageName: string;
  group: string;
  version: string;
  kind: string;
  /**
   * The kind's TypeScript type as the package's code names it: the kind, unless the templates use that
   * name for something else (the runtime's `Controller`, the global `Date`...): then `<Kind>Object`.
   */
  kindType: string;
  /** What the package's code imports from its generated types: `Widget`, or `Date as DateObject`. */
  kindImport: string;
  singular: string;
  plural: string;
  shortName: string;
  namespaced: boolean;
  scope: 'Namespaced' | 'Cluster';
  owns: OwnedKind[];
  /**
   * The owned kinds that are not built in (`group/version/Kind`): a cluster needs their CRDs, which are
   * not the chart's; the integration test installs a minimal one of each that its API server lacks.
   */
  customOwns: OwnedKind[];
  /** The kind in UPPER_SNAKE_CASE, the prefix of the package's constants (`WIDGET_GROUP`). */
  constantPrefix: string;
  /** The kind's words for headings (`WidgetSet` -> `Widget Set`). */
  title: string;
  /**
   * The first built-in kind of `owns`, with what the integration test needs to create one of its
   * objects; undefined when it owns no built-in kind (a custom kind's CRD is not in the test's cluster).
   */
  ownedExample: OwnedExample | undefined;
}

/** A built-in kind the controller owns (its resource, for the test's handle) and an object of it. */
export interface OwnedExample extends Pick<OwnedKind, 'kind' | 'group' | 'version' | 'plural'> {
  /** A minimal valid object of the kind without metadata, as a TypeScript object literal. */
  body: string;
}

/** What the generator's TypeScript templates name (identifiers.ts reads them from the templates). */
export interface TemplateNames {
  /** Every identifier of the templates' code: imported, declared or global. */
  used: ReadonlySet<string>;
  /** The names the generated package's index.ts exports besides the kind's types (`StatusPatch`...). */
  exported: ReadonlySet<string>;
}

/**
 * What the generated src/generated/types.ts imports (`pnpm generate`, scripts/crd-types.ts): a kind of
 * that name would clash with it there.
 */
export const GENERATED_TYPES_IMPORTS: readonly string[] = ['ObjectMeta'];

/** An option the generator refuses; the message is one line naming the option. */
export class InvalidOptionError extends Error {
  override readonly name = 'InvalidOptionError';
}

/** The built-in kinds `--owns` accepts by name (all namespaced). */
export const BUILT_IN_KINDS: readonly OwnedKind[] = [
  builtIn('Pod', '', 'v1', 'pods'),
  builtIn('ConfigMap', '', 'v1', 'configmaps'),
  builtIn('Secret', '', 'v1', 'secrets'),
  builtIn('Service', '', 'v1', 'services'),
  builtIn('ServiceAccount', '', 'v1', 'serviceaccounts'),
  builtIn('PersistentVolumeClaim', '', 'v1', 'persistentvolumeclaims'),
  builtIn('Deployment', 'apps', 'v1', 'deployments'),
  builtIn('StatefulSet', 'apps', 'v1', 'statefulsets'),
  builtIn('DaemonSet', 'apps', 'v1', 'daemonsets'),
  builtIn('ReplicaSet', 'apps', 'v1', 'replicasets'),
  builtIn('Job', 'batch', 'v1', 'jobs'),
  builtIn('CronJob', 'batch', 'v1', 'cronjobs'),
  builtIn('Ingress', 'networking.k8s.io', 'v1', 'ingresses'),
  builtIn('NetworkPolicy', 'networking.k8s.io', 'v1', 'networkpolicies'),
];

// RFC 1035 labels (a letter first): the name also becomes an npm package, a Helm chart and env-free
// identifiers, none of which may start with a digit.
const DNS_LABEL = /^[a-z]([-a-z0-9]*[a-z0-9])?$/;
const DNS_SUBDOMAIN_LABEL = '[a-z0-9]([-a-z0-9]*[a-z0-9])?';
// The API server refuses a CRD whose group has no dot.
const GROUP = new RegExp(`^${DNS_SUBDOMAIN_LABEL}(\\.${DNS_SUBDOMAIN_LABEL})+$`);
const VERSION = /^v[1-9][0-9]*((alpha|beta)[1-9][0-9]*)?$/;
const KIND = /^[A-Z][A-Za-z0-9]*$/;
const SHORT_NAME = /^[a-z][a-z0-9]{1,4}$/;
/** The words of a PascalCase kind; a run of capitals is one word (`HTTPRoute` -> HTTP, Route), digits end a word. */
const KIND_WORDS = /[A-Z]+(?![a-z])[0-9]*|[A-Z][a-z0-9]*/g;

export function templateVariables(
  options: ControllerOptions,
  names: TemplateNames = { used: new Set(), exported: new Set() },
): TemplateVariables {
  const name = checked('name', options.name, DNS_LABEL.test(options.name) && options.name.length <= 63, {
    expected: "a DNS label (lower-case letters, digits and '-', a letter first, at most 63 characters)",
    example: 'widget-sync',
  });
  const group = checked('--group', options.group, GROUP.test(options.group) && options.group.length <= 253, {
    expected: 'a DNS subdomain with at least one dot',
    example: 'widgets.example.com',
  });
  const version = checked('--api-version', options.apiVersion, VERSION.test(options.apiVersion), {
    expected: 'a Kubernetes API version',
    example: 'v1, v1alpha1 or v2beta3',
  });
  const kind = checked('--kind', options.kind, KIND.test(options.kind) && options.kind.length <= 63, {
    expected: 'a PascalCase kind (a capital letter first, then letters and digits)',
    example: 'Widget',
  });
  if (names.exported.has(kind))
    throw new InvalidOptionError(
      `--kind: "${kind}" is also the name of something else the generated package exports (its src/index.ts), beside the kind's type; pick another kind`,
    );
  if (GENERATED_TYPES_IMPORTS.includes(kind))
    throw new InvalidOptionError(
      `--kind: "${kind}" is the name of the type the generated src/generated/types.ts imports for the kind's metadata; pick another kind`,
    );
  const kindType = kindTypeName(kind, names.used);
  const singular = kind.toLowerCase();
  const plural =
    options.plural === undefined
      ? pluralOf(singular)
      : checked('--plural', options.plural, DNS_LABEL.test(options.plural), {
          expected: 'a lower-case resource name (a DNS label)',
          example: pluralOf(singular),
        });
  const shortName = options.shortName ?? defaultShortName(singular);
  if (!SHORT_NAME.test(shortName))
    throw new InvalidOptionError(
      options.shortName === undefined
        ? `--kind: "${kind}" gives no short name of 2 to 5 letters (its first letter and consonants: "${shortName}"); pass --short-name`
        : `--short-name: expected 2 to 5 lower-case letters or digits, a letter first, e.g. ${defaultShortName(singular)}; got "${shortName}"`,
    );
  const namespaced = options.clusterScoped !== true && options.namespaced !== false;
  const words = kind.match(KIND_WORDS) ?? [kind];
  const owns = ownedKinds(options.owns);
  return {
    name,
    packageName: `@loopwright/${name}`,
    group,
    version,
    kind,
    kindType,
    kindImport: kindType === kind ? kind : `${kind} as ${kindType}`,
    singular,
    plural,
    shortName,
    namespaced,
    scope: namespaced ? 'Namespaced' : 'Cluster',
    owns,
    customOwns: owns.filter((owned) => !BUILT_IN_KINDS.includes(owned)),
    ownedExample: ownedExample(owns),
    constantPrefix: words.map((word) => word.toUpperCase()).join('_'),
    title: words.join(' '),
  };
}

/**
 * The kind itself when the templates use no identifier of that name, else `<Kind>Object` (or with a
 * number when even that is taken): the name the package's code gives the kind's type.
 */
export function kindTypeName(kind: string, used: ReadonlySet<string>): string {
  if (!used.has(kind)) return kind;
  let candidate = `${kind}Object`;
  for (let n = 2; used.has(candidate); n += 1) candidate = `${kind}Object${n}`;
  return candidate;
}

/** English plural of a lower-case kind, as Kubernetes resources are named. */
export function pluralOf(singular: string): string {
  if (/(s|x|z|ch|sh)$/.test(singular)) return `${singular}es`;
  if (/[^aeiou]y$/.test(singular)) return `${singular.slice(0, -1)}ies`;
  return `${singular}s`;
}

/** The first letter and the consonants after it, at most 5 (`widget` -> `wdgt`). */
export function defaultShortName(singular: string): string {
  return (singular.charAt(0) + singular.slice(1).replace(/[aeiou0-9]/g, '')).slice(0, 5);
}

/** `--owns`: built-in kinds by name, others as `group/version/Kind`; each once. */
export function ownedKinds(owns: string | undefined): OwnedKind[] {
  const entries = (owns ?? '')
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '');
  const resolved = entries.map(ownedKind);
  const seen = new Set<string>();
  for (const owned of resolved) {
    const id = `${owned.group}/${owned.kind}`;
    if (seen.has(id))
      throw new InvalidOptionError(`--owns: ${owned.kind} (${owned.apiVersion}) is listed twice`);
    seen.add(id);
  }
  return resolved;
}

function ownedKind(entry: string): OwnedKind {
  const parts = entry.split('/');
  if (parts.length === 1) {
    const known = BUILT_IN_KINDS.find((builtInKind) => builtInKind.kind === entry);
    if (known) return known;
    throw new InvalidOptionError(
      `--owns: unknown kind "${entry}": expected one of ${BUILT_IN_KINDS.map((k) => k.kind).join(', ')}, or group/version/Kind such as cluster.x-k8s.io/v1beta2/Cluster`,
    );
  }
  const [group = '', version = '', kind = ''] = parts;
  if (parts.length !== 3 || !GROUP.test(group) || !VERSION.test(version) || !KIND.test(kind))
    throw new InvalidOptionError(
      `--owns: "${entry}" is neither a built-in kind nor group/version/Kind such as cluster.x-k8s.io/v1beta2/Cluster`,
    );
  return { kind, group, version, plural: pluralOf(kind.toLowerCase()), apiVersion: `${group}/${version}` };
}

const CONTAINERS = [{ name: 'main', image: 'busybox:1.37.0' }];
const POD_TEMPLATE = { metadata: { labels: { app: 'example' } }, spec: { containers: CONTAINERS } };
const SELECTOR = { matchLabels: { app: 'example' } };
const JOB_TEMPLATE = { spec: { containers: CONTAINERS, restartPolicy: 'Never' } };

/** A minimal valid object of each built-in kind, without metadata. */
const EXAMPLE_BODIES: Readonly<Record<string, object>> = {
  Pod: { spec: { containers: CONTAINERS } },
  ConfigMap: { data: { key: 'value' } },
  Secret: { stringData: { key: 'value' } },
  Service: { spec: { ports: [{ port: 80 }] } },
  ServiceAccount: {},
  PersistentVolumeClaim: {
    spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } },
  },
  Deployment: { spec: { selector: SELECTOR, template: POD_TEMPLATE } },
  StatefulSet: { spec: { serviceName: 'example', selector: SELECTOR, template: POD_TEMPLATE } },
  DaemonSet: { spec: { selector: SELECTOR, template: POD_TEMPLATE } },
  ReplicaSet: { spec: { selector: SELECTOR, template: POD_TEMPLATE } },
  Job: { spec: { template: JOB_TEMPLATE } },
  CronJob: { spec: { schedule: '0 0 1 1 *', jobTemplate: { spec: { template: JOB_TEMPLATE } } } },
  Ingress: { spec: { defaultBackend: { service: { name: 'example', port: { number: 80 } } } } },
  NetworkPolicy: { spec: { podSelector: {} } },
};

export function ownedExample(owns: readonly OwnedKind[]): OwnedExample | undefined {
  for (const owned of owns) {
    const body = EXAMPLE_BODIES[owned.kind];
    if (body === undefined || !BUILT_IN_KINDS.includes(owned)) continue;
    return {
      kind: owned.kind,
      group: owned.group,
      version: owned.version,
      plural: owned.plural,
      body: JSON.stringify({ apiVersion: owned.apiVersion, kind: owned.kind, ...body }),
    };
  }
  return undefined;
}

function builtIn(kind: string, group: string, version: string, plural: string): OwnedKind {
  return { kind, group, version, plural, apiVersion: group === '' ? version : `${group}/${version}` };
}

function checked(
  option: string,
  value: string,
  valid: boolean,
  { expected, example }: { expected: string; example: string },
): string {
  if (!valid)
    throw new InvalidOptionError(`${option}: expected ${expected}, e.g. ${example}; got "${value}"`);
  return value;
}
