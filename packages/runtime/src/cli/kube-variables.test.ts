import { variablesRead } from '@loopwright/testing';
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
    // Nothing applies, so every source is tried and every variable read.
    const read = variablesRead(
      (env) => {
        assert.throws(
          () => loadKubeConfig({ env, serviceAccountDir: join(dir, 'no-service-account') }),
          KubeConfigError,
        );
      },
      { HOME: join(dir, 'home') },
      { HOME: join(dir, 'home'), KUBERNETES_SERVICE_HOST: '10.0.0.1', KUBERNETES_SERVICE_PORT: '443' },
    ).filter((name) => name !== 'HOME');
    assert.deepEqual(read, KUBE_CONFIG_VARIABLES.map((variable) => variable.name).sort());
  });
});
