/** The at-scheduler program (src/main.ts) as a process on a real control plane. */
import { KubeClient } from '@loopwright/runtime';
import { createTestNamespace, eventually, loadTestKubeConfig } from '@loopwright/envtest';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { installAtCrd } from './crd.test-support.ts';
import type { At } from './generated/types.ts';
import { AT_RESOURCE, POD_RESOURCE, type Pod } from './resource.ts';

describe('the at-scheduler program (src/main.ts)', () => {
  it('starts against KUBECONFIG, leads, serves /readyz and /metrics, runs an At, and exits 0 on SIGTERM', async () => {
    const kc = loadTestKubeConfig();
    const client = new KubeClient(kc, { rateLimit: false });
    await installAtCrd(kc);
    const ns = await createTestNamespace(kc, 'at-main');
    const child = spawn(
      process.execPath,
      ['--conditions=development', fileURLToPath(new URL('./main.ts', import.meta.url))],
      {
        env: {
          ...process.env,
          WATCH_NAMESPACE: ns.name,
          LEADER_ELECTION_NAMESPACE: ns.name,
          // One address: one server for /readyz and /metrics, on a free port it logs.
          HEALTH_PROBE_BIND_ADDRESS: '127.0.0.1:0',
          METRICS_BIND_ADDRESS: '127.0.0.1:0',
          LOG_FORMAT: 'json',
          LOG_LEVEL: 'info',
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    const lines: Record<string, unknown>[] = [];
    let stderr = '';
    createInterface({ input: child.stdout }).on('line', (line) => {
      try {
        lines.push(JSON.parse(line) as Record<string, unknown>);
      } catch {
        lines.push({ message: line });
      }
    });
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const exited = new Promise<number | null>((resolve) =>
      child.on('exit', (code) => {
        resolve(code);
      }),
    );
    try {
      await eventually(
        () => {
          assert.ok(
            lines.some((l) => l.message === 'target cluster' && l.namespaces !== undefined),
            stderr,
          );
        },
        { timeoutMs: 20_000 },
      );
      let port = 0;
      await eventually(
        () => {
          port = Number(lines.find((l) => typeof l.port === 'number')?.port ?? 0);
          assert.ok(port > 0);
        },
        { timeoutMs: 20_000 },
      );
      await eventually(
        async () => {
          assert.equal((await fetch(`http://127.0.0.1:${port}/readyz`)).status, 200);
        },
        { timeoutMs: 20_000 },
      );
      await client.resource<At>(AT_RESOURCE).create({
        apiVersion: 'cnat.programming-kubernetes.info/v1alpha1',
        kind: 'At',
        metadata: { name: 'main', namespace: ns.name },
        spec: { schedule: '2019-04-12T10:12:00Z', command: 'true' },
      });
      const pods = client.resource<Pod>(POD_RESOURCE);
      await eventually(() => pods.get({ namespace: ns.name, name: 'main-pod' }), { timeoutMs: 20_000 });
      const metrics = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
      assert.match(
        metrics,
        new RegExp(`controller_runtime_reconcile_total\\{[^}]*controller="at-scheduler-${ns.name}"`),
      );
      // at-scheduler's own families (wired in main.ts), and the runtime's heap after GC.
      for (const family of [
        'loopwright_at_start_delay_seconds',
        'loopwright_ats_finished_total',
        'loopwright_ats_overdue',
        'nodejs_heap_used_after_gc_bytes',
      ])
        assert.match(metrics, new RegExp(`^# TYPE ${family} `, 'm'));
      child.kill('SIGTERM');
      assert.equal(await exited, 0);
    } finally {
      child.kill('SIGKILL');
      await ns.cleanup();
      await client.close();
    }
  });
});
