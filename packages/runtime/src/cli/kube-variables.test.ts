import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { KubeConfigError, loadKubeConfig } from '../kube/config.ts';
import { KUBE_CONFIG_VARIABLES } from './kube-variables.ts';

describe('KUBE_CONFIG_VARIABLES', () => {
  const dir = mkdtempSync(join(tmpdir(), 'kube-variables-test-'));
  after(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  it('lists exactly the variables loadKubeConfig reads, besides HOME', () => {
    const read = new Set<string>();
    const recording = (env: Record<string, string>): Record<string, string | undefined> =>
      new Proxy(env, {
        get: (target, key) => {
          if (typeof key === 'string') read.add(key);
          return Reflect.get(target, key) as unknown;
        },
      });
    // Nothing applies, so every source is tried and every variable read.
    const environments: Record<string, string>[] = [
      {},
      { KUBERNETES_SERVICE_HOST: '10.0.0.1', KUBERNETES_SERVICE_PORT: '443' },
    ];
    for (const env of environments)
      assert.throws(
        () =>
          loadKubeConfig({
            env: recording({ ...env, HOME: join(dir, 'home') }),
            serviceAccountDir: join(dir, 'no-service-account'),
          }),
        KubeConfigError,
      );
    read.delete('HOME');
    assert.deepEqual([...read].sort(), KUBE_CONFIG_VARIABLES.map((variable) => variable.name).sort());
  });
});
