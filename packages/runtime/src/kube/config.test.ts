import assert from 'node:assert/strict';
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { after, describe, it } from 'node:test';
import { KubeConfigError, describeContext, loadKubeConfig } from './config.ts';

const dir = mkdtempSync(join(tmpdir(), 'kubeconfig-test-'));
after(() => {
  rmSync(dir, { recursive: true, force: true });
});

function kubeconfig(
  name: string,
  options: { server: string; context?: string; namespace?: string; current?: boolean },
): string {
  const context = options.context ?? name;
  const path = join(dir, `${name}.yaml`);
  writeFileSync(
    path,
    [
      'apiVersion: v1',
      'kind: Config',
      `clusters: [{ name: ${name}, cluster: { server: "${options.server}" } }]`,
      `users: [{ name: ${name}-user, user: { token: t-${name} } }]`,
      `contexts: [{ name: ${context}, context: { cluster: ${name}, user: ${name}-user${options.namespace ? `, namespace: ${options.namespace}` : ''} } }]`,
      options.current === false ? '' : `current-context: ${context}`,
    ].join('\n'),
  );
  return path;
}

const flagFile = kubeconfig('flag', { server: 'https://flag.example:6443' });
const envFile = kubeconfig('env', { server: 'https://env.example:6443', namespace: 'team-a' });
const env2File = kubeconfig('env2', { server: 'https://env2.example:6443' });
const home = join(dir, 'home');
mkdirSync(join(home, '.kube'), { recursive: true });
writeFileSync(
  join(home, '.kube', 'config'),
  `apiVersion: v1\nkind: Config\nclusters: [{ name: home, cluster: { server: "https://home.example" } }]\nusers: [{ name: u, user: {} }]\ncontexts: [{ name: home, context: { cluster: home, user: u } }]\ncurrent-context: home\n`,
);
const serviceAccount = join(dir, 'sa');
mkdirSync(serviceAccount);
writeFileSync(join(serviceAccount, 'token'), 'sa-token');
writeFileSync(join(serviceAccount, 'ca.crt'), '');
writeFileSync(join(serviceAccount, 'namespace'), 'controllers\n');
const inCluster = { KUBERNETES_SERVICE_HOST: '10.0.0.1', KUBERNETES_SERVICE_PORT: '443' };

describe('loadKubeConfig precedence (controller-runtime GetConfig)', () => {
  it('1. the explicit path beats KUBECONFIG, in-cluster and home', () => {
    const kc = loadKubeConfig({
      kubeconfig: flagFile,
      env: { KUBECONFIG: envFile, HOME: home, ...inCluster },
      serviceAccountDir: serviceAccount,
    });
    assert.equal(describeContext(kc).server, 'https://flag.example:6443');
    assert.deepEqual(describeContext(kc).source, { kind: 'flag', paths: [flagFile] });
  });

  it('2. KUBECONFIG beats in-cluster and home', () => {
    const kc = loadKubeConfig({
      env: { KUBECONFIG: envFile, HOME: home, ...inCluster },
      serviceAccountDir: serviceAccount,
    });
    assert.deepEqual(describeContext(kc), {
      context: 'env',
      cluster: 'env',
      server: 'https://env.example:6443',
      user: 'env-user',
      namespace: 'team-a',
      source: { kind: 'KUBECONFIG', paths: [envFile] },
    });
  });

  it('3. in-cluster beats home: server from the env, token file, the Pod namespace', () => {
    const kc = loadKubeConfig({ env: { HOME: home, ...inCluster }, serviceAccountDir: serviceAccount });
    const description = describeContext(kc);
    assert.equal(description.server, 'https://10.0.0.1:443');
    assert.equal(description.namespace, 'controllers');
    assert.equal(description.source?.kind, 'in-cluster');
    assert.equal(
      (kc.getCurrentUser()?.authProvider as { config: { tokenFile: string } } | undefined)?.config.tokenFile,
      join(serviceAccount, 'token'),
    );
  });

  it('3. in-cluster wraps an IPv6 service host in brackets', () => {
    const kc = loadKubeConfig({
      env: { KUBERNETES_SERVICE_HOST: 'fd00::1', KUBERNETES_SERVICE_PORT: '443' },
      serviceAccountDir: serviceAccount,
    });
    assert.equal(describeContext(kc).server, 'https://[fd00::1]:443');
  });

  it('4. falls back to $HOME/.kube/config, namespace default', () => {
    const kc = loadKubeConfig({ env: { HOME: home }, serviceAccountDir: join(dir, 'none') });
    assert.equal(describeContext(kc).server, 'https://home.example');
    assert.equal(describeContext(kc).namespace, 'default');
  });

  it('merges a KUBECONFIG list first-wins and skips missing files', () => {
    const list = [join(dir, 'missing.yaml'), env2File, envFile].join(delimiter);
    const kc = loadKubeConfig({ env: { KUBECONFIG: list } });
    assert.equal(kc.getCurrentContext(), 'env2');
    assert.deepEqual(
      kc
        .getContexts()
        .map((c) => c.name)
        .sort(),
      ['env', 'env2'],
    );
    assert.deepEqual(describeContext(kc).source?.paths, [env2File, envFile]);
  });

  it('selects another context on request and rejects unknown ones', () => {
    const list = [env2File, envFile].join(delimiter);
    assert.equal(
      describeContext(loadKubeConfig({ env: { KUBECONFIG: list }, context: 'env' })).server,
      'https://env.example:6443',
    );
    assert.throws(
      () => loadKubeConfig({ env: { KUBECONFIG: list }, context: 'prod' }),
      /context "prod" not found/,
    );
  });

  it('names every source it tried when nothing applies', () => {
    assert.throws(
      () => loadKubeConfig({ env: { HOME: join(dir, 'nohome') }, serviceAccountDir: serviceAccount }),
      (error: unknown) => {
        assert.ok(error instanceof KubeConfigError);
        assert.match(
          error.message,
          /--kubeconfig \(not given\).*KUBECONFIG \(not set\).*in-cluster \(KUBERNETES_SERVICE_HOST.*nohome\/\.kube\/config \(does not exist\)/,
        );
        assert.equal(error.tried.length, 4);
        return true;
      },
    );
  });

  it('fails clearly for a missing explicit file, a KUBECONFIG of missing files, or no current-context', () => {
    assert.throws(
      () => loadKubeConfig({ kubeconfig: join(dir, 'nope.yaml'), env: { HOME: home } }),
      /--kubeconfig .*nope\.yaml does not exist/,
    );
    assert.throws(
      () => loadKubeConfig({ env: { KUBECONFIG: join(dir, 'nope.yaml'), HOME: home } }),
      /KUBECONFIG=.*none of its files exist/,
    );
    const noCurrent = kubeconfig('nocurrent', { server: 'https://x', current: false });
    assert.throws(() => loadKubeConfig({ kubeconfig: noCurrent }), /no current-context/);
  });
});
