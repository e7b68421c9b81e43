import { KubeConfig } from '@kubernetes/client-node';
import { KubeApiError, KubeClient, type KubeObject, type ResourceType } from '@loopwright/client';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { dirname } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { eventually } from '../kube.ts';
import { startControlPlane } from './start.ts';

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

function childPids(pid: number): number[] {
  const path = `/proc/${pid}/task/${pid}/children`;
  return existsSync(path) ? readFileSync(path, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number) : [];
}

describe('control-plane lifecycle', () => {
  it('stop() leaves no process and no state directory behind', async () => {
    const cp = await startControlPlane();
    const pids = childPids(process.pid).filter((pid) =>
      readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(cp.dir),
    );
    assert.equal(pids.length, 3, 'etcd, kube-apiserver and kube-controller-manager run');
    await cp.stop();
    assert.deepEqual(pids.filter(alive), []);
    assert.equal(existsSync(cp.dir), false);
  });

  it('beforeControllerManager runs with the admin kubeconfig once the API server is up, before the controllers', async () => {
    const seen: { processes: number; server: string }[] = [];
    const cp = await startControlPlane({
      beforeControllerManager: async (kubeconfigPath) => {
        const dir = dirname(kubeconfigPath);
        const kc = new KubeConfig();
        kc.loadFromFile(kubeconfigPath);
        const client = new KubeClient(kc, { rateLimit: false });
        try {
          const version = (await (await client.fetch('/version')).json()) as { gitVersion: string };
          assert.match(version.gitVersion, /^v1\./);
        } finally {
          await client.close();
        }
        const processes = childPids(process.pid).filter((pid) =>
          readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(dir),
        );
        seen.push({ processes: processes.length, server: kc.getCurrentCluster()?.server ?? '' });
      },
    });
    try {
      assert.deepEqual(seen, [{ processes: 2, server: cp.server }], 'etcd and kube-apiserver only');
    } finally {
      await cp.stop();
    }
  });

  it('a failing beforeControllerManager fails the start and leaves nothing running', async () => {
    let dir = '';
    await assert.rejects(
      startControlPlane({
        beforeControllerManager: (kubeconfigPath) => {
          dir = dirname(kubeconfigPath);
          return Promise.reject(new Error('the hook failed'));
        },
      }),
      /the hook failed/,
    );
    const left = childPids(process.pid).filter((pid) =>
      readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(dir),
    );
    assert.deepEqual(left.filter(alive), []);
    assert.equal(existsSync(dir), false);
  });

  const configMaps: ResourceType = {
    group: '',
    version: 'v1',
    plural: 'configmaps',
    kind: 'ConfigMap',
    namespaced: true,
  };

  it('restartApiServer(SIGKILL): the API server is killed, answers again with the same data, on the same address', async () => {
    const cp = await startControlPlane();
    const kc = new KubeConfig();
    kc.loadFromFile(cp.kubeconfigPath);
    const client = new KubeClient(kc, { rateLimit: false });
    try {
      const objects = client.resource<KubeObject & { data: Record<string, string> }>(configMaps);
      await objects.create({ metadata: { namespace: 'default', name: 'kept' }, data: { a: '1' } });
      const pidsBefore = childPids(process.pid);
      await cp.restartApiServer('SIGKILL');
      assert.notDeepEqual(childPids(process.pid), pidsBefore, 'a new kube-apiserver process');
      assert.deepEqual((await objects.get({ namespace: 'default', name: 'kept' })).data, { a: '1' });
    } finally {
      await client.close();
      await cp.stop();
    }
  });

  it('compactEtcd: a watch that etcd serves from a resourceVersion older than the compaction gets 410 Gone', async () => {
    // Without a watch cache for ConfigMaps their watches read etcd, which refuses compacted revisions.
    const cp = await startControlPlane({ apiServerFlags: ['--watch-cache-sizes=configmaps#0'] });
    const kc = new KubeConfig();
    kc.loadFromFile(cp.kubeconfigPath);
    const client = new KubeClient(kc, { rateLimit: false });
    try {
      const objects = client.resource<KubeObject & { data: Record<string, string> }>(configMaps);
      const key = { namespace: 'default', name: 'compacted' };
      const created = await objects.create({ metadata: key, data: { n: '0' } });
      for (const n of ['1', '2']) await objects.patch(key, { merge: { data: { n } } });
      const from = created.metadata?.resourceVersion ?? '';
      const watchFrom = async (): Promise<unknown> => {
        const signal = AbortSignal.timeout(5000);
        for await (const event of objects.watch({ namespace: 'default', resourceVersion: from, signal }))
          return event.type === 'ERROR' ? event.object : event.type;
        return undefined;
      };
      assert.equal(await watchFrom(), 'MODIFIED', 'before the compaction, etcd replays the history');
      const revision = await cp.compactEtcd();
      assert.ok(revision > Number(from), `compacted at ${revision}, past ${from}`);
      const answer = await watchFrom().catch((error: unknown) => error);
      const gone =
        answer instanceof KubeApiError ? answer.status : (answer as { code?: number } | undefined)?.code;
      assert.equal(gone, 410, JSON.stringify(answer));
    } finally {
      await client.close();
      await cp.stop();
    }
  });

  it('its processes exit when the test runner is killed with SIGKILL', async () => {
    const script = fileURLToPath(new URL('./start-and-hang.test-support.ts', import.meta.url));
    const runner = spawn(process.execPath, ['--conditions=development', script], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const [dir, pids] = await new Promise<[string, number[]]>((resolve, reject) => {
      let out = '';
      runner.stdout.on('data', (chunk: Buffer) => {
        out += chunk.toString();
        if (!out.includes('\n')) return;
        const [stateDir = '', list = ''] = out.trim().split(' ');
        resolve([stateDir, list.split(',').map(Number)]);
      });
      runner.once('exit', (code) => {
        reject(new Error(`fixture exited early with ${code}`));
      });
    });
    assert.equal(pids.length, 3);
    runner.kill('SIGKILL');
    await eventually(
      () => {
        assert.deepEqual(pids.filter(alive), []);
      },
      { timeoutMs: 20_000 },
    );
    // A SIGKILLed runner cannot remove its temporary directory; that much is ours to clean.
    await rm(dir, { recursive: true, force: true });
  });
});
