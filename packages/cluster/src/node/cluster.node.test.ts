/**
 * The single-node cluster: a Ready node, real containers under the restricted Pod Security profile,
 * images pulled from the node's registry, Services reaching the API server from a pod, nothing routed
 * off the machine, and a stop that leaves the machine exactly as it was.
 */
import { CoreV1Api, KubeConfig, type V1Pod } from '@kubernetes/client-node';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdir, readdir, readFile } from 'node:fs/promises';
import { promisify } from 'node:util';
import { after, before, describe, test } from 'node:test';
import { busyboxStandIn } from '../images/busybox.ts';
import { writeImageArchive } from '../images/oci-image.ts';
import { eventually } from '@loopwright/envtest';
import { ensureReleaseTools } from '../tools/release-tools.ts';
import { processesInCgroupRoot } from './cgroups.ts';
import { restoreAbandonedNode, startCluster, type Cluster } from './cluster.ts';
import { machineDifferences, readMachineState, type MachineState } from './machine.ts';
import { NODE_NFT_TABLE } from './network.ts';

const run = promisify(execFile);
const namespace = 'node-test';

/** The node's processes (its registry among them), by their command lines. */
async function shimProcesses(): Promise<string[]> {
  const found: string[] = [];
  for (const pid of await readdir('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    const cmdline = await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '');
    if (
      /containerd-shim|kubelet|kube-proxy|kube-scheduler|loopwright-containerd|registry\0serve\0[^\0]*\/registry\/config\.yml/.test(
        cmdline,
      )
    )
      found.push(`${pid} ${cmdline.replaceAll('\0', ' ')}`);
  }
  return found;
}

describe('a real single-node cluster', () => {
  let machineBefore: MachineState;
  let cluster: Cluster;
  let core: CoreV1Api;

  before(async () => {
    const log = (line: string): void => {
      process.stderr.write(`[node] ${line}\n`);
    };
    // What a killed earlier run left is not "the machine as it was": startCluster removes it first.
    await restoreAbandonedNode({ log });
    machineBefore = await readMachineState();
    cluster = await startCluster({ log });
    const kc = new KubeConfig();
    kc.loadFromFile(cluster.kubeconfigPath);
    core = kc.makeApiClient(CoreV1Api);
    const busybox = await busyboxStandIn(`${cluster.dir}/images/blobs`);
    await cluster.importImage(
      (await writeImageArchive(busybox, `${cluster.dir}/images/busybox.tar`)).archivePath,
    );
    await core.createNamespace({
      body: {
        metadata: {
          name: namespace,
          labels: { 'pod-security.kubernetes.io/enforce': 'restricted' },
        },
      },
    });
    await eventually(() => core.readNamespacedServiceAccount({ name: 'default', namespace }), {
      timeoutMs: 30_000,
    });
  });
  // Only a failed run gets here with the cluster up; the last test stops it and asserts the restore.
  after(() => cluster.stop());

  /** The restricted Pod Security profile, for the namespace's admission. */
  const restrictedPodSecurity = {
    runAsNonRoot: true,
    runAsUser: 1000,
    seccompProfile: { type: 'RuntimeDefault' },
  };
  const restrictedContainer = (script: string, image = 'busybox:1.37.0') => ({
    name: 'main',
    image,
    imagePullPolicy: 'IfNotPresent',
    command: ['/bin/sh', '-c', script],
    securityContext: { allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } },
  });

  async function runPod(
    name: string,
    script: string,
    extra: Partial<V1Pod['spec']> = {},
    image = 'busybox:1.37.0',
  ): Promise<V1Pod> {
    await core.createNamespacedPod({
      namespace,
      body: {
        metadata: { name },
        spec: {
          restartPolicy: 'Never',
          securityContext: restrictedPodSecurity,
          containers: [
            {
              ...restrictedContainer(script, image),
              terminationMessagePolicy: 'FallbackToLogsOnError',
            },
          ],
          ...extra,
        },
      },
    });
    let pod: V1Pod | undefined;
    await eventually(
      async () => {
        pod = await core.readNamespacedPod({ name, namespace });
        assert.match(pod.status?.phase ?? '', /^(Succeeded|Failed)$/);
      },
      { timeoutMs: 60_000, intervalMs: 250 },
    );
    return pod as V1Pod;
  }

  test('the node is Ready, v1.36.3, at the bridge address', async () => {
    const node = await core.readNode({ name: cluster.nodeName });
    assert.equal(node.status?.conditions?.find((c) => c.type === 'Ready')?.status, 'True');
    assert.equal(node.status.nodeInfo?.kubeletVersion, 'v1.36.3');
    assert.match(node.status.nodeInfo.containerRuntimeVersion, /^containerd:\/\//);
    assert.deepEqual(
      node.status.addresses?.find((a) => a.type === 'InternalIP')?.address,
      cluster.network.hostAddress,
    );
  });

  test('a restricted pod runs its command in a container: exit code, logs, no privileges', async () => {
    const pod = await runPod(
      'restricted',
      'grep -E "^(CapEff|NoNewPrivs|Seccomp):" /proc/self/status; exit 3',
    );
    assert.equal(pod.status?.phase, 'Failed');
    const terminated = pod.status.containerStatuses?.[0]?.state?.terminated;
    assert.equal(terminated?.exitCode, 3);
    const logs = await core.readNamespacedPodLog({ name: 'restricted', namespace });
    assert.match(logs, /CapEff:\s+0000000000000000/);
    assert.match(logs, /NoNewPrivs:\s+1/);
    assert.match(logs, /Seccomp:\s+2/);
    // FallbackToLogsOnError: the kubelet put the tail of the log into the termination message.
    assert.equal(terminated.message, logs);
  });

  test("the node's containerd pulls an image pushed to the node's registry", async () => {
    const layout = `${cluster.dir}/images/busybox-layout`;
    await mkdir(layout, { recursive: true });
    await run('tar', ['-xf', `${cluster.dir}/images/busybox.tar`, '-C', layout]);
    const repository = `${cluster.registry}/node-test/busybox`;
    const crane = (await ensureReleaseTools()).crane;
    await run(crane, ['push', '--insecure', layout, `${repository}:imported`]);
    // An image of its own (another config, so another image ID): once the kubelet has pulled an image
    // ID from a registry, it no longer counts that ID as preloaded, and busybox:1.37.0, imported, would
    // then have to be pulled from Docker Hub by the tests that follow (the kubelet's pull records).
    await run(crane, [
      'mutate',
      '--insecure',
      '--label',
      'loopwright.test=pulled',
      '--tag',
      `${repository}:pushed`,
      `${repository}:imported`,
    ]);
    const { stdout: digest } = await run(crane, ['digest', '--insecure', `${repository}:pushed`]);
    const pod = await runPod('pulled', 'echo pulled', {}, `${repository}:pushed`);
    assert.equal(pod.status?.phase, 'Succeeded');
    // The repository digest is what a pull records; an imported image has none of this registry.
    assert.equal(pod.status.containerStatuses?.[0]?.imageID, `${repository}@${digest.trim()}`);
  });

  test('a pod that is not restricted is refused by Pod Security admission', async () => {
    await assert.rejects(
      core.createNamespacedPod({
        namespace,
        body: {
          metadata: { name: 'unrestricted' },
          // Runs as the image's user (root), may escalate, keeps its capabilities: baseline, not restricted.
          spec: { containers: [{ name: 'main', image: 'busybox:1.37.0' }] },
        },
      }),
      /violates PodSecurity \W*restricted:latest/,
    );
  });

  test('a pod reaches the API server through the kubernetes Service, and has no route off the machine', async () => {
    const pod = await runPod(
      'network',
      [
        'echo service=$KUBERNETES_SERVICE_HOST:$KUBERNETES_SERVICE_PORT',
        'echo | nc -w 3 $KUBERNETES_SERVICE_HOST $KUBERNETES_SERVICE_PORT && echo api=reachable',
        'ip route',
        // An address outside the node: the kernel must find no route for it (asked, not sent to).
        'ip route get 192.0.2.1 2>&1 | grep -q unreachable && echo outside=unreachable',
      ].join('; '),
    );
    const logs = await core.readNamespacedPodLog({ name: 'network', namespace });
    assert.equal(pod.status?.phase, 'Succeeded', logs);
    assert.match(logs, /service=10\.96\.0\.1:443/);
    assert.match(logs, /api=reachable/);
    assert.doesNotMatch(logs, /^default/m);
    assert.match(logs, /outside=unreachable/);
  });

  test("a pod reaches another pod through a Service's ClusterIP (forwarded on the bridge only)", async () => {
    // A server pod (busybox httpd) behind a Service, as a controller's metrics are behind its Service.
    await core.createNamespacedPod({
      namespace,
      body: {
        metadata: { name: 'web', labels: { app: 'web' } },
        spec: {
          securityContext: restrictedPodSecurity,
          containers: [
            {
              ...restrictedContainer(
                'mkdir -p /tmp/www && echo served > /tmp/www/index.html && exec httpd -f -p 8080 -h /tmp/www',
              ),
              ports: [{ containerPort: 8080 }],
              readinessProbe: { tcpSocket: { port: 8080 }, periodSeconds: 1 },
            },
          ],
        },
      },
    });
    const service = await core.createNamespacedService({
      namespace,
      body: {
        metadata: { name: 'web' },
        spec: { selector: { app: 'web' }, ports: [{ port: 80, targetPort: 8080 }] },
      },
    });
    await eventually(
      async () => {
        const pod = await core.readNamespacedPod({ name: 'web', namespace });
        assert.equal(pod.status?.conditions?.find((c) => c.type === 'Ready')?.status, 'True');
      },
      { timeoutMs: 60_000, intervalMs: 250 },
    );
    // kube-proxy programs the Service a moment after its endpoint is ready: retry within the pod. (nc,
    // not busybox 1.37's wget, which died of a segmentation fault in this pod.)
    const clusterIP = service.spec?.clusterIP ?? '';
    const pod = await runPod(
      'client',
      `for i in $(seq 1 30); do printf 'GET /index.html HTTP/1.0\\r\\n\\r\\n' | nc -w 2 ${clusterIP} 80 | grep -x served && exit 0; sleep 1; done; exit 1`,
    );
    const logs = await core.readNamespacedPodLog({ name: 'client', namespace });
    assert.equal(pod.status?.phase, 'Succeeded', logs);
    assert.match(logs, /^served$/m);
    // What the bridge forwards stays on the bridge: nothing a pod sends is routed off the machine.
    const { stdout: chain } = await run('nft', ['list', 'chain', 'inet', NODE_NFT_TABLE, 'forward']);
    const bridge = cluster.network.bridge;
    assert.match(chain, new RegExp(`iifname "${bridge}" oifname != "${bridge}" drop`));
    assert.equal((await readFile(`/proc/sys/net/ipv4/conf/${bridge}/forwarding`, 'utf8')).trim(), '1');
  });

  /** A pod that runs `script` until deleted, with its Running container; resolves with its address. */
  async function startLongPod(
    name: string,
    script: string,
    extra: Partial<V1Pod['spec']> = {},
  ): Promise<V1Pod> {
    await core.createNamespacedPod({
      namespace,
      body: {
        metadata: { name },
        spec: {
          securityContext: restrictedPodSecurity,
          containers: [{ ...restrictedContainer(script), resources: { limits: { memory: '64Mi' } } }],
          ...extra,
        },
      },
    });
    let pod: V1Pod | undefined;
    await eventually(
      async () => {
        pod = await core.readNamespacedPod({ name, namespace });
        assert.ok(
          pod.status?.podIP && pod.status.containerStatuses?.[0]?.state?.running,
          JSON.stringify(pod.status),
        );
      },
      { timeoutMs: 60_000, intervalMs: 250 },
    );
    return pod as V1Pod;
  }

  const logOf = (name: string) => core.readNamespacedPodLog({ name, namespace });

  test("blackHoleApiServer: a pod's connections to the API server time out (no reset) until restored", async () => {
    // Each attempt: how it ended, and how long it took (a reset or refusal fails at once, a drop times out).
    const pod = await startLongPod(
      'black-hole',
      'while true; do s=$(date +%s); if echo | nc -w 3 $KUBERNETES_SERVICE_HOST $KUBERNETES_SERVICE_PORT >/dev/null; then echo reach; else echo "dropped $(( $(date +%s) - s ))"; fi; sleep 1; done',
    );
    await eventually(
      async () => {
        assert.match(await logOf('black-hole'), /^reach$/m);
      },
      { timeoutMs: 30_000 },
    );
    const restore = await cluster.blackHoleApiServer(pod.status?.podIP ?? '');
    await eventually(
      async () => {
        assert.match(await logOf('black-hole'), /^dropped [3-9]$/m);
      },
      {
        timeoutMs: 30_000,
        intervalMs: 500,
      },
    );
    await restore();
    const { stdout: rules } = await run('nft', ['list', 'table', 'inet', NODE_NFT_TABLE]);
    assert.doesNotMatch(rules, new RegExp(pod.status?.podIP?.replaceAll('.', '\\.') ?? 'none'));
    const dropped = (await logOf('black-hole')).lastIndexOf('dropped');
    await eventually(
      async () => {
        assert.match((await logOf('black-hole')).slice(dropped), /^reach$/m);
      },
      {
        timeoutMs: 30_000,
        intervalMs: 500,
      },
    );
    await core.deleteNamespacedPod({ name: 'black-hole', namespace, gracePeriodSeconds: 0 });
  });

  test("resetApiServerConnections: the pod's open connection to the API server is reset", async () => {
    // A connection held open (its stdin, a FIFO this shell holds open, never ends), reported when it ends.
    const pod = await startLongPod(
      'reset',
      'mkfifo /tmp/in; exec 3<>/tmp/in; while true; do nc $KUBERNETES_SERVICE_HOST $KUBERNETES_SERVICE_PORT </tmp/in; echo closed; done',
    );
    let reset = 0;
    await eventually(
      async () => {
        reset = await cluster.resetApiServerConnections(pod.status?.podIP ?? '');
        assert.ok(reset > 0, 'no connection to reset yet');
      },
      { timeoutMs: 30_000, intervalMs: 500 },
    );
    // The API server itself would drop the silent client only after its TLS handshake timeout (10 s).
    await eventually(
      async () => {
        assert.match(await logOf('reset'), /^closed$/m);
      },
      {
        timeoutMs: 5000,
        intervalMs: 250,
      },
    );
    await core.deleteNamespacedPod({ name: 'reset', namespace, gracePeriodSeconds: 0 });
  });

  test("lowerMemoryLimit: the container is OOM-killed as it grows, and restarted with its spec's limit", async () => {
    // Grows by about 1 MB a second: 64Mi is a minute away, the lowered limit a second or two.
    const pod = await startLongPod(
      'grower',
      'a=""; while true; do a="$a$(head -c 1000000 /dev/zero | tr "\\0" x)"; sleep 1; done',
    );
    const containerId = (pod.status?.containerStatuses?.[0]?.containerID ?? '').replace(/^\w+:\/\//, '');
    await cluster.lowerMemoryLimit(containerId, 2 ** 20);
    let restarted: V1Pod | undefined;
    await eventually(
      async () => {
        restarted = await core.readNamespacedPod({ name: 'grower', namespace });
        const status = restarted.status?.containerStatuses?.[0];
        assert.equal(status?.lastState?.terminated?.reason, 'OOMKilled', JSON.stringify(status));
        assert.ok(status.state?.running, 'restarted by the kubelet');
      },
      { timeoutMs: 60_000, intervalMs: 500 },
    );
    const next = (restarted?.status?.containerStatuses?.[0]?.containerID ?? '').replace(/^\w+:\/\//, '');
    assert.notEqual(next, containerId);
    // The new container has the spec's limit again.
    const { stdout: cgroup } = await run('find', [
      '/sys/fs/cgroup/memory/loopwright',
      '-type',
      'd',
      '-name',
      next,
    ]);
    const limit = await readFile(`${cgroup.trim()}/memory.limit_in_bytes`, 'utf8');
    assert.equal(Number(limit), 64 * 2 ** 20);
    await core.deleteNamespacedPod({ name: 'grower', namespace, gracePeriodSeconds: 0 });
  });

  test('restartKubelet: the kubelet comes back, running containers keep running, new pods run', async () => {
    const before = await core.readNamespacedPod({ name: 'web', namespace });
    await cluster.restartKubelet();
    const after = await core.readNamespacedPod({ name: 'web', namespace });
    assert.equal(
      after.status?.containerStatuses?.[0]?.containerID,
      before.status?.containerStatuses?.[0]?.containerID,
    );
    assert.equal(after.status?.containerStatuses?.[0]?.restartCount, 0);
    const pod = await runPod('after-kubelet-restart', 'echo ran');
    assert.equal(pod.status?.phase, 'Succeeded');
  });

  test('stop() leaves the machine as it was: processes, cgroups, mounts, links, rules, sysctls, files', async () => {
    const nodeProcessesBefore = await shimProcesses();
    assert.ok(nodeProcessesBefore.length >= 3, 'the node processes were found while it ran');
    await cluster.stop();
    assert.deepEqual(await processesInCgroupRoot('loopwright'), []);
    assert.deepEqual(await shimProcesses(), []);
    assert.deepEqual(machineDifferences(machineBefore, await readMachineState()), []);
  });
});
