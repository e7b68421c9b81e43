import { variablesRead } from '@loopwright/envtest';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { KubeConfigError, loadKubeConfig } from '@loopwright/client';
import { IN_CLUSTER_VARIABLES } from './help.ts';
import { standardOptions } from './standard-options.ts';

describe('the environment loadKubeConfig reads, as --help lists it', () => {
  const dir = mkdtempSync(join(tmpdir(), 'kube-environment-test-'));
  after(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  it("is --kubeconfig's variable and the in-cluster variables, besides HOME", () => {
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
    const kubeconfig = standardOptions({ name: 'x', workers: 1, reconcileTimeout: '0' }).kubeconfig.variable;
    assert.deepEqual(read, [kubeconfig, ...IN_CLUSTER_VARIABLES].sort());
  });
});
