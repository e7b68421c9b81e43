/**
 * cloud-node's options, under HCCM's names (`--node-monitor-period`, and `HCLOUD_*` as the variables
 * users already set), so that users can switch; the standard ones come from the runtime. `--help` and the
 * README table are generated from here.
 */
import { DEFAULT_ENDPOINT } from '@loopwright/hcloud';
import {
  boolean,
  defineProgram,
  duration,
  httpUrl,
  labelSelector,
  oneOf,
  option,
  secret,
  text,
} from '@loopwright/runtime';

export const program = defineProgram({
  // The executable's (its package's) name; its controllers' names are theirs.
  name: 'cloud-node',
  packageJson: new URL('../package.json', import.meta.url),
  // Per controller; most reconciles wait on one shared sweep of the servers.
  workers: 16,
  // A Hetzner call may take about 75 s before it gives up (4 attempts of up to 15 s, backoff between
  // them, up to 10 s of 429 waits), and a reconcile makes a few: five minutes are past the slowest one
  // that still gets an answer, and cut only one that hangs.
  reconcileTimeout: '5m',
  // Nodes are cluster-scoped.
  namespaced: false,
  options: {
    hcloudToken: secret({
      fileFlag: '--hcloud-token-file',
      description: 'the Hetzner Cloud API token (read-only suffices)',
      expected: 'an API token without whitespace',
      valid: (token) => /^\S+$/.test(token),
      // HCCM reads HCLOUD_TOKEN_FILE only when HCLOUD_TOKEN is unset: a deployment that sets both starts.
      whenBothSet: 'variable',
    }),
    hcloudEndpoint: option(httpUrl(DEFAULT_ENDPOINT), {
      flag: '--hcloud-endpoint',
      description: 'Hetzner Cloud API base URL',
      default: DEFAULT_ENDPOINT,
    }),
    hcloudNetwork: option(text({ placeholder: '<id|name>', expected: 'a network id or name' }), {
      flag: '--hcloud-network',
      description: "the private network whose IP is each Node's InternalIP; must exist at start",
      unset: 'none',
    }),
    addressFamily: option(oneOf(['ipv4', 'ipv6', 'dualstack']), {
      flag: '--hcloud-instances-address-family',
      description: "which of the server's public IPs are the Node's ExternalIPs",
      default: 'ipv4',
    }),
    zoneLabels: option(boolean, {
      flag: '--hcloud-instances-zone-label-enabled',
      description: 'set the topology zone labels',
      default: 'true',
    }),
    hcloudDebug: option(boolean, {
      flag: '--hcloud-debug',
      description: 'log each Hetzner API request (at level debug: with --log-level=debug)',
      default: 'false',
    }),
    nodeMonitorPeriod: option(duration('10ms', '24h'), {
      flag: '--node-monitor-period',
      description:
        'how often each NotReady Node is checked against its server, as long as all of them cost at most one listing of all servers per 55s (otherwise every 55s)',
      default: '5s',
    }),
    nodeStatusUpdateFrequency: option(duration('10ms', '24h'), {
      flag: '--node-status-update-frequency',
      description: 'how often initialised Nodes get their addresses refreshed',
      default: '5m',
    }),
    nodeSelector: option(labelSelector, {
      flag: '--node-selector',
      description: 'only Nodes matching this label selector are touched, by both controllers',
      unset: 'all Nodes',
    }),
  },
});
