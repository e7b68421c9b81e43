/**
 * `pnpm demo` end to end: the real entry point as a child process, as a user runs it. With KUBECONFIG
 * pointing at a control plane this test starts (which, like any cluster without nodes, has no kubelet:
 * the test plays it, the demo must not), without KUBECONFIG (the embedded control plane), and
 * interrupted with Ctrl-C halfway (nothing may outlive it).
 */
import { isNotFound, KubeClient, loadKubeConfig } from '@loopwright/runtime';
import { eventually, startControlPlane, type ControlPlane } from '@loopwright/testing';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';

const entry = fileURLToPath(new URL('main.ts', import.meta.url));
const NAMESPACE = 'loopwright-demo';
const NODE_NAME = 'loopwright-demo-node';

interface DemoRun {
  child: ChildProcess;
  output(): string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

function runDemo(env: Record<string, string | undefined>): DemoRun {
  const child = spawn(process.execPath, ['--conditions=development', entry], {
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => {
      resolve({ code, signal });
    }),
  );
  return { child, output: () => output, exited };
}

function envWithout(name: string): Record<string, string | undefined> {
  return Object.fromEntries(Object.entries(process.env).filter(([key]) => key !== name));
}

/** The rows of the last table printed: columns are separated by at least three spaces, as kubectl's. */
function lastTable(output: string): Record<string, { status: string; detail: string }> {
  const lines = output.split('\n');
  const header = lines.findLastIndex((line) =>
    /^KIND\s{3,}NAME\s{3,}STATUS\s{3,}DETAIL\s{3,}AGE$/.test(line),
  );
  assert.ok(header >= 0, 'no table in the output');
  const rows: Record<string, { status: string; detail: string }> = {};
  for (const line of lines.slice(header + 1)) {
    const [kind, , status, detail] = line.split(/\s{3,}/);
    if (!kind || !status || !detail || !['At', 'MailgunCluster', 'Node'].includes(kind)) break;
    rows[kind] = { status, detail };
  }
  return rows;
}

function assertConverged(output: string): void {
  assert.match(output, /^all three converged, [\d.]+s after the samples were applied:$/m);
  assert.match(output, /^ {2}MailgunCluster demo: Mailgun accepted 1 request mail for it;/m);
  const rows = lastTable(output);
  assert.equal(rows.At?.status, 'DONE/Succeeded');
  assert.match(rows.At.detail, /^exit code 0, pod hello-pod$/);
  assert.equal(rows.MailgunCluster?.status, 'RequestSent');
  assert.match(rows.MailgunCluster.detail, /^message <[^>]+>, Ready=False \(WaitingForFulfilment\)$/);
  assert.equal(rows.Node?.status, 'Initialized');
  assert.match(rows.Node.detail, /^hcloud:\/\/\d+, untainted, instance-type=cpx31, zone=fsn1-dc14$/);
}

/** What a kubelet does for the At's pod: the command container ran and exited 0. */
async function playKubelet(client: KubeClient, run: DemoRun): Promise<void> {
  while (run.child.exitCode === null && run.child.signalCode === null) {
    const at = await client
      .requestJson<{ status?: { podName?: string } }>(
        'GET',
        `/apis/cnat.programming-kubernetes.info/v1alpha1/namespaces/${NAMESPACE}/ats/hello`,
      )
      .catch(() => undefined);
    const podName = at?.status?.podName;
    if (podName) {
      const now = new Date().toISOString();
      const done = await client
        .requestJson('PATCH', `/api/v1/namespaces/${NAMESPACE}/pods/${podName}/status`, {
          contentType: 'application/merge-patch+json',
          body: {
            status: {
              phase: 'Succeeded',
              containerStatuses: [
                {
                  name: 'command',
                  image: 'busybox',
                  imageID: '',
                  ready: false,
                  restartCount: 0,
                  state: {
                    terminated: { exitCode: 0, reason: 'Completed', startedAt: now, finishedAt: now },
                  },
                },
              ],
            },
          },
        })
        .then(
          () => true,
          () => false, // the pod is not there yet
        );
      if (done) return;
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

async function exists(client: KubeClient, path: string): Promise<boolean> {
  try {
    await client.requestJson('GET', path);
    return true;
  } catch (error) {
    if (isNotFound(error)) return false;
    throw error;
  }
}

/** Every live descendant of `pid` (zombies count as gone), from /proc. */
function descendants(pid: number): number[] {
  const children = new Map<number, number[]>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
    } catch {
      continue; // exited meanwhile
    }
    // After the command name in parentheses (which may hold spaces): state, ppid, ...
    const [state, ppid] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (state === 'Z') continue;
    const list = children.get(Number(ppid)) ?? [];
    list.push(Number(entry));
    children.set(Number(ppid), list);
  }
  const found: number[] = [];
  for (let queue = [pid]; queue.length > 0;) {
    const next = children.get(queue.shift() ?? -1) ?? [];
    found.push(...next);
    queue.push(...next);
  }
  return found;
}

function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[0] !== 'Z';
  } catch {
    return false;
  }
}

// Independent runs (the embedded ones start control planes of their own): side by side, to keep the
// suite's wall time near one demo run.
describe('pnpm demo', { concurrency: true }, () => {
  let controlPlane: ControlPlane;
  let client: KubeClient;

  before(async () => {
    controlPlane = await startControlPlane();
    client = new KubeClient(loadKubeConfig({ kubeconfig: controlPlane.kubeconfigPath }), {
      rateLimit: false,
    });
  });
  after(async () => {
    await client.close();
    await controlPlane.stop();
  });

  it('with KUBECONFIG: says so, converges, then deletes its namespace and Node and keeps the CRDs', async () => {
    const run = runDemo({ ...process.env, KUBECONFIG: controlPlane.kubeconfigPath });
    await playKubelet(client, run);
    const { code } = await run.exited;
    const output = run.output();
    assert.equal(code, 0, output);
    assert.equal(
      output.split('\n')[0],
      `using the cluster of KUBECONFIG (context loopwright, server ${controlPlane.server})`,
    );
    assert.doesNotMatch(output, /plays kubelet/);
    assertConverged(output);
    assert.match(output, new RegExp(`^deleted namespace ${NAMESPACE} and Node ${NODE_NAME}$`, 'm'));
    assert.equal(await exists(client, `/api/v1/namespaces/${NAMESPACE}`), false);
    assert.equal(await exists(client, `/api/v1/nodes/${NODE_NAME}`), false);
    const events = await client.requestJson<{ items: unknown[] }>(
      'GET',
      `/api/v1/namespaces/default/events?fieldSelector=${encodeURIComponent(`involvedObject.name=${NODE_NAME}`)}`,
    );
    assert.deepEqual(events.items, []);
    for (const crd of [
      'ats.cnat.programming-kubernetes.info',
      'mailgunclusters.infrastructure.cluster.x-k8s.io',
    ])
      assert.ok(await exists(client, `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${crd}`), crd);
  });

  it('without KUBECONFIG: its own control plane, kubelet played for the one pod, converges', async () => {
    const run = runDemo(envWithout('KUBECONFIG'));
    const { code } = await run.exited;
    const output = run.output();
    assert.equal(code, 0, output);
    assert.match(output.split('\n')[0] ?? '', /^no KUBECONFIG: starting the embedded control plane/);
    assert.match(output, /the demo plays kubelet for the At's pod/);
    assertConverged(output);
  });

  it('Ctrl-C halfway: exits 130 and leaves no process behind', async () => {
    const run = runDemo(envWithout('KUBECONFIG'));
    await eventually(
      () => {
        assert.match(run.output(), /^applied: /m);
      },
      { timeoutMs: 120_000, intervalMs: 100 },
    );
    const pid = run.child.pid ?? -1;
    const before = descendants(pid);
    // etcd, kube-apiserver, kube-controller-manager, the Mailgun mock and the three controllers.
    assert.ok(before.length >= 7, `descendants: ${before.join(' ')}`);
    run.child.kill('SIGINT');
    const { code } = await run.exited;
    assert.equal(code, 130, run.output());
    assert.match(run.output(), /interrupted \(SIGINT\): cleaning up/);
    assert.deepEqual(before.filter(alive), []);
  });
});
