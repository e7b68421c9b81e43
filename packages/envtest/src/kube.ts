import { CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';

/** The test run's admin kubeconfig, from KUBECONFIG as set by the global setup. */
export function loadTestKubeConfig(): KubeConfig {
  const path = process.env.KUBECONFIG;
  if (!path) {
    throw new Error(
      'KUBECONFIG is not set: run integration tests with --test-global-setup=../envtest/src/global-setup.ts',
    );
  }
  const kc = new KubeConfig();
  kc.loadFromFile(path);
  return kc;
}

export interface EventuallyOptions {
  timeoutMs?: number;
  intervalMs?: number;
}

/** Retries an assertion until it passes or the timeout expires; then rethrows its last failure. */
export async function eventually(assertion: () => unknown, options: EventuallyOptions = {}): Promise<void> {
  const { timeoutMs = 10_000, intervalMs = 50 } = options;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      await assertion();
      return;
    } catch (error) {
      if (Date.now() >= deadline) throw error;
      await sleep(intervalMs);
    }
  }
}

export interface TestNamespace {
  name: string;
  cleanup(): Promise<void>;
}

/**
 * Creates a uniquely named namespace and waits for its `default` ServiceAccount (created by the
 * controller manager), so pods can be created in it right away.
 */
export async function createTestNamespace(kc: KubeConfig, prefix = 'test'): Promise<TestNamespace> {
  const core = kc.makeApiClient(CoreV1Api);
  const name = `${prefix
    .toLowerCase()
    .replace(/[^a-z0-9-]/g, '-')
    .slice(0, 40)}-${randomBytes(3).toString('hex')}`;
  await core.createNamespace({ body: { metadata: { name, labels: { 'loopwright.dev/test': 'true' } } } });
  await eventually(() => core.readNamespacedServiceAccount({ name: 'default', namespace: name }), {
    timeoutMs: 30_000,
  });
  return {
    name,
    cleanup: async () => {
      await core.deleteNamespace({ name }).catch(() => undefined);
    },
  };
}
