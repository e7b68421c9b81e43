import { KubeConfig } from '@kubernetes/client-node';
import { KubeClient, type ResourceType } from '@loopwright/client';
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

export const namespaces: ResourceType = {
  group: '',
  version: 'v1',
  plural: 'namespaces',
  kind: 'Namespace',
  namespaced: false,
};
const serviceAccounts: ResourceType = {
  group: '',
  version: 'v1',
  plural: 'serviceaccounts',
  kind: 'ServiceAccount',
  namespaced: true,
};

/** Runs `use` with a client of its own, closed after it so no kept-alive connection holds the process. */
async function withClient<T>(kc: KubeConfig, use: (client: KubeClient) => Promise<T>): Promise<T> {
  const client = new KubeClient(kc, { rateLimit: false });
  try {
    return await use(client);
  } finally {
    await client.close();
  }
}

/**
 * Creates a uniquely named namespace and waits for its `default` ServiceAccount (created by the
 * controller manager), so pods can be created in it right away.
 */
export async function createTestNamespace(kc: KubeConfig, prefix = 'test'): Promise<TestNamespace> {
  const name = `${prefix
    .toLowerCase()
    .replace(/[^a-z0-9-]/g, '-')
    .slice(0, 40)}-${randomBytes(3).toString('hex')}`;
  await withClient(kc, async (client) => {
    await client
      .resource(namespaces)
      .create({ metadata: { name, labels: { 'loopwright.dev/test': 'true' } } });
    const accounts = client.resource(serviceAccounts);
    await eventually(() => accounts.get({ namespace: name, name: 'default' }), { timeoutMs: 30_000 });
  });
  return {
    name,
    // Best effort: a test's cleanup runs after its assertions, and the control plane may be gone.
    cleanup: () =>
      withClient(kc, async (client) => {
        await client.resource(namespaces).delete({ name });
      }).catch(() => undefined),
  };
}
