import { CoordinationV1Api, PatchStrategy, setHeaderOptions, type KubeConfig } from '@kubernetes/client-node';
import { createTestNamespace, loadTestKubeConfig, type TestNamespace } from '@loopwright/envtest';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

const fixture = fileURLToPath(new URL('./run-manager.test-support.ts', import.meta.url));

/** Starts the fixture process and resolves once it reports leading. */
async function startLeader(leaseName: string, namespace: string): Promise<ChildProcess> {
  const child = spawn(process.execPath, ['--conditions=development', fixture, leaseName, namespace], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  await new Promise<void>((resolve, reject) => {
    child.stdout.on('data', (chunk: Buffer) => {
      if (chunk.toString().includes('leading')) resolve();
    });
    child.once('exit', (code) => {
      reject(new Error(`fixture exited with ${code} before leading`));
    });
  });
  return child;
}

describe('runManager as a process main loop', () => {
  let kc: KubeConfig;
  let ns: TestNamespace;

  before(async () => {
    kc = loadTestKubeConfig();
    ns = await createTestNamespace(kc, 'run-manager');
  });
  after(() => ns.cleanup());

  it('exits 0 on SIGTERM and releases the Lease', async () => {
    const child = await startLeader('graceful', ns.name);
    child.kill('SIGTERM');
    const [code] = (await once(child, 'exit')) as [number | null];
    assert.equal(code, 0);
    const lease = await kc
      .makeApiClient(CoordinationV1Api)
      .readNamespacedLease({ name: 'graceful', namespace: ns.name });
    assert.equal(lease.spec?.holderIdentity ?? '', '', 'the Lease was released');
    assert.equal(lease.spec?.leaseDurationSeconds, 1);
  });

  it('exits 1 when leadership is lost', async () => {
    const child = await startLeader('lost', ns.name);
    await kc.makeApiClient(CoordinationV1Api).patchNamespacedLease(
      {
        name: 'lost',
        namespace: ns.name,
        body: { spec: { holderIdentity: 'someone-else', leaseDurationSeconds: 60 } },
      },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
    const [code] = (await once(child, 'exit')) as [number | null];
    assert.equal(code, 1);
  });
});
