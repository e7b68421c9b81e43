import assert from 'node:assert/strict';
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { after, describe, it } from 'node:test';
import { KubeConfig } from '@kubernetes/client-node';
import {
  KubeConfigError,
  describeContext,
  loadKubeConfig,
  type KubeConfigInput,
  type LoadKubeConfigOptions,
} from './kubeconfig.ts';

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

  it('selects another context on request', () => {
    const list = [env2File, envFile].join(delimiter);
    assert.equal(
      describeContext(loadKubeConfig({ env: { KUBECONFIG: list }, context: 'env' })).server,
      'https://env.example:6443',
    );
  });

  it('names every source it tried when nothing applies', () => {
    assert.throws(
      () => loadKubeConfig({ env: { HOME: join(dir, 'nohome') }, serviceAccountDir: serviceAccount }),
      (error: unknown) => {
        assert.ok(error instanceof KubeConfigError);
        assert.equal(error.input, 'kubeconfig');
        assert.match(
          error.message,
          /--kubeconfig \(not given\).*KUBECONFIG \(not set\).*in-cluster \(KUBERNETES_SERVICE_HOST.*nohome\/\.kube\/config \(does not exist\)/,
        );
        assert.equal(error.tried.length, 4);
        return true;
      },
    );
  });
});

/** Asserts that loading fails on `input` with exactly `message`. */
function refuses(options: LoadKubeConfigOptions, input: KubeConfigInput, message: string): void {
  assert.throws(
    () => loadKubeConfig({ serviceAccountDir: join(dir, 'none'), ...options }),
    (error: unknown) => {
      assert.ok(error instanceof KubeConfigError, String(error));
      assert.deepEqual({ input: error.input, message: error.message }, { input, message });
      return true;
    },
  );
}

/** A kubeconfig file of `lines`. */
function file(name: string, ...lines: string[]): string {
  const path = join(dir, `${name}.yaml`);
  writeFileSync(path, ['apiVersion: v1', 'kind: Config', ...lines].join('\n'));
  return path;
}

describe('loadKubeConfig: what it refuses, and which input is wrong', () => {
  const cluster = 'clusters: [{ name: c, cluster: { server: "https://c.example" } }]';
  const user = 'users: [{ name: u, user: { token: s3cret-token } }]';

  it('the files: an explicit path or a KUBECONFIG that does not exist', () => {
    refuses(
      { kubeconfig: join(dir, 'nope.yaml'), env: { HOME: home } },
      'kubeconfig',
      `"${join(dir, 'nope.yaml')}" does not exist`,
    );
    const list = [join(dir, 'nope.yaml'), join(dir, 'nope2.yaml')].join(delimiter);
    refuses({ env: { KUBECONFIG: list, HOME: home } }, 'kubeconfig', `none of its files exist ("${list}")`);
  });

  it('the files: one that does not load, said without quoting its lines (they may hold a token)', () => {
    const broken = file('broken', 'users:', '- name: u', '  user: {token: s3cret-token', '   bad: [');
    refuses(
      { kubeconfig: broken },
      'kubeconfig',
      `cannot load "${broken}": missed comma between flow collection entries at line 6, column 7`,
    );
    const invalid = file('invalid', 'clusters: [{ name: c, cluster: {} }]');
    refuses(
      { env: { KUBECONFIG: invalid } },
      'kubeconfig',
      `cannot load "${invalid}": clusters[0].cluster.server is missing`,
    );
    refuses({ kubeconfig: dir }, 'kubeconfig', `cannot load "${dir}": EISDIR`);
  });

  it('the context asked for: not in the files; says where they came from and which exist (names only)', () => {
    const list = [env2File, envFile].join(delimiter);
    refuses(
      { env: { KUBECONFIG: list }, context: 'prod' },
      'context',
      `expected a context of KUBECONFIG "${list}" (env2, env), got "prod"`,
    );
    refuses(
      { kubeconfig: flagFile, context: 'prod' },
      'context',
      `expected a context of --kubeconfig "${flagFile}" (flag), got "prod"`,
    );
    refuses(
      { env: { HOME: home }, context: 'prod' },
      'context',
      `expected a context of "${join(home, '.kube', 'config')}" (home), got "prod"`,
    );
    const none = file('no-contexts', cluster, user);
    refuses(
      { kubeconfig: none, context: 'prod' },
      'context',
      `expected a context of --kubeconfig "${none}" (it has none), got "prod"`,
    );
    refuses(
      { env: { HOME: home, ...inCluster }, serviceAccountDir: serviceAccount, context: 'prod' },
      'context',
      'expected a context of the in-cluster configuration (inClusterContext), got "prod"',
    );
  });

  it('no context at all: the files set no current-context and none was asked for', () => {
    const noCurrent = kubeconfig('nocurrent', { server: 'https://x', current: false });
    refuses(
      { kubeconfig: noCurrent },
      'context',
      `required: "${noCurrent}" sets no current-context (nocurrent)`,
    );
  });

  it("the files' own current-context is theirs to fix; a context asked for is the context's", () => {
    const dangling = file(
      'dangling',
      cluster,
      user,
      'contexts: [{ name: a, context: { cluster: c, user: u } }]',
      'current-context: gone',
    );
    refuses(
      { kubeconfig: dangling },
      'kubeconfig',
      `"${dangling}": current-context "gone" is not one of its contexts (a)`,
    );
    assert.equal(loadKubeConfig({ kubeconfig: dangling, context: 'a' }).getCurrentContext(), 'a');

    const brokenContexts = file(
      'broken-contexts',
      cluster,
      user,
      'contexts: [',
      '  { name: ok, context: { cluster: c, user: u } },',
      '  { name: no-cluster, context: { cluster: missing, user: u } },',
      '  { name: no-user, context: { cluster: c, user: missing } },',
      '  { name: bad-namespace, context: { cluster: c, user: u, namespace: Team_A } },',
      '  ]',
      'current-context: no-cluster',
    );
    refuses(
      { kubeconfig: brokenContexts },
      'kubeconfig',
      `"${brokenContexts}": context "no-cluster" names cluster "missing", which is not defined`,
    );
    const asked = `--kubeconfig "${brokenContexts}"`;
    refuses(
      { kubeconfig: brokenContexts, context: 'no-cluster' },
      'context',
      `${asked}: context "no-cluster" names cluster "missing", which is not defined`,
    );
    refuses(
      { kubeconfig: brokenContexts, context: 'no-user' },
      'context',
      `${asked}: context "no-user" names user "missing", which is not defined`,
    );
    refuses(
      { kubeconfig: brokenContexts, context: 'bad-namespace' },
      'context',
      `${asked}: context "bad-namespace" has namespace "Team_A", which is not a DNS-1123 label`,
    );
    assert.equal(loadKubeConfig({ kubeconfig: brokenContexts, context: 'ok' }).getCurrentContext(), 'ok');
  });

  it("a context's cluster and user: a server that is no http(s) URL, files that cannot be read", () => {
    const context = 'contexts: [{ name: x, context: { cluster: c, user: u } }]';
    const anonymous = file(
      'anonymous',
      cluster,
      'contexts: [{ name: x, context: { cluster: c } }]',
      'current-context: x',
    );
    assert.equal(
      describeContext(loadKubeConfig({ kubeconfig: anonymous })).user,
      '',
      'no user: no credentials',
    );
    const noUrl = file(
      'no-url',
      'clusters: [{ name: c, cluster: { server: "c.example:6443" } }]',
      user,
      context,
      'current-context: x',
    );
    refuses(
      { kubeconfig: noUrl },
      'kubeconfig',
      `"${noUrl}": context "x" names cluster "c", whose server "c.example:6443" is not an http(s) URL`,
    );
    const badProxy = file(
      'bad-proxy',
      'clusters: [{ name: c, cluster: { server: "https://c.example", proxy-url: "ftp://user:pw@proxy" } }]',
      user,
      context,
      'current-context: x',
    );
    refuses(
      { kubeconfig: badProxy },
      'kubeconfig',
      `"${badProxy}": context "x" names cluster "c", whose proxy-url is not an http(s) or socks5 URL`,
    );
    const ca = join(dir, 'missing-ca.crt');
    const noCa = file(
      'no-ca',
      `clusters: [{ name: c, cluster: { server: "https://c.example", certificate-authority: "${ca}" } }]`,
      user,
      context,
      'current-context: x',
    );
    refuses(
      { kubeconfig: noCa, context: 'x' },
      'context',
      `--kubeconfig "${noCa}": context "x" names cluster "c", whose certificate-authority "${ca}" cannot be read: ENOENT`,
    );
    const key = join(dir, 'missing.key');
    const noKey = file(
      'no-key',
      cluster,
      `users: [{ name: u, user: { client-certificate: "${flagFile}", client-key: "${key}" } }]`,
      context,
      'current-context: x',
    );
    refuses(
      { kubeconfig: noKey },
      'kubeconfig',
      `"${noKey}": context "x" names user "u", whose client-key "${key}" cannot be read: ENOENT`,
    );
  });
});

describe('loadKubeConfig: which source applies', () => {
  it('an empty --kubeconfig or KUBECONFIG entries that are all empty count as not given', () => {
    const kc = loadKubeConfig({
      kubeconfig: '',
      env: { KUBECONFIG: `${delimiter}${delimiter}`, HOME: home },
    });
    assert.deepEqual(describeContext(kc).source, { kind: 'home', paths: [join(home, '.kube', 'config')] });
    const list = ['', envFile, ''].join(delimiter);
    assert.deepEqual(describeContext(loadKubeConfig({ env: { KUBECONFIG: list } })).source?.paths, [envFile]);
  });

  it('in-cluster needs both service variables and the token file', () => {
    const onlyHost = { KUBERNETES_SERVICE_HOST: '10.0.0.1', HOME: home };
    assert.equal(
      describeContext(loadKubeConfig({ env: onlyHost, serviceAccountDir: serviceAccount })).source?.kind,
      'home',
    );
    const onlyPort = { KUBERNETES_SERVICE_PORT: '443', HOME: home };
    assert.equal(
      describeContext(loadKubeConfig({ env: onlyPort, serviceAccountDir: serviceAccount })).source?.kind,
      'home',
    );
    const noToken = join(dir, 'sa-without-token');
    mkdirSync(noToken, { recursive: true });
    assert.throws(
      () => loadKubeConfig({ env: { HOME: join(dir, 'nohome'), ...inCluster }, serviceAccountDir: noToken }),
      (error: unknown) => {
        assert.ok(error instanceof KubeConfigError);
        assert.equal(error.tried[2], `in-cluster (${join(noToken, 'token')} does not exist)`);
        assert.deepEqual(error.tried.slice(0, 2), ['--kubeconfig (not given)', 'KUBECONFIG (not set)']);
        return true;
      },
    );
  });

  it('in-cluster: the mounted CA, verified, the token file provider, and namespace default without its file', () => {
    const bare = join(dir, 'sa-bare');
    mkdirSync(bare, { recursive: true });
    writeFileSync(join(bare, 'token'), 'sa-token');
    writeFileSync(join(bare, 'ca.crt'), '');
    const kc = loadKubeConfig({ env: inCluster, serviceAccountDir: bare });
    assert.deepEqual(describeContext(kc), {
      context: 'inClusterContext',
      cluster: 'inCluster',
      server: 'https://10.0.0.1:443',
      user: 'inClusterUser',
      namespace: 'default',
      source: { kind: 'in-cluster', paths: [bare] },
    });
    assert.equal(kc.getCurrentCluster()?.caFile, join(bare, 'ca.crt'));
    assert.equal(kc.getCurrentCluster()?.skipTLSVerify, false);
    assert.deepEqual(kc.getCurrentUser()?.authProvider, {
      name: 'tokenFile',
      config: { tokenFile: join(bare, 'token') },
    });
  });

  it('in-cluster: a Pod namespace that is no DNS-1123 label is refused', () => {
    const odd = join(dir, 'sa-odd');
    mkdirSync(odd, { recursive: true });
    writeFileSync(join(odd, 'token'), 'sa-token');
    writeFileSync(join(odd, 'ca.crt'), '');
    writeFileSync(join(odd, 'namespace'), 'Team_A\n');
    refuses(
      { env: inCluster, serviceAccountDir: odd },
      'kubeconfig',
      'the in-cluster configuration: context "inClusterContext" has namespace "Team_A", which is not a DNS-1123 label',
    );
  });
});

describe('loadKubeConfig: merging a KUBECONFIG list (clientcmd)', () => {
  it('the first definition of a cluster, user or context wins; the first current-context wins', () => {
    const first = file(
      'merge-first',
      'clusters: [{ name: shared, cluster: { server: "https://first.example" } }]',
      'users: [{ name: shared-user, user: { token: first-token } }]',
      'contexts: [{ name: shared, context: { cluster: shared, user: shared-user, namespace: first } }]',
    );
    const second = file(
      'merge-second',
      'clusters: [{ name: shared, cluster: { server: "https://second.example" } }]',
      'users: [{ name: shared-user, user: { token: second-token } }]',
      'contexts: [{ name: shared, context: { cluster: shared, user: shared-user, namespace: second } }]',
      'current-context: shared',
    );
    const kc = loadKubeConfig({ env: { KUBECONFIG: [first, second].join(delimiter) } });
    const description = describeContext(kc);
    assert.deepEqual(
      [description.context, description.server, description.namespace],
      ['shared', 'https://first.example', 'first'],
    );
    assert.equal(kc.getCurrentUser()?.token, 'first-token');
    assert.equal(kc.getClusters().length, 1);
  });
});

describe('loadKubeConfig: what a usable context is', () => {
  it('a namespace must be a DNS-1123 label of at most 63 characters', () => {
    const good = ['a', '1', 'a-b', 'team-a1', 'x'.repeat(63)];
    const bad = ['A', 'a_b', '-a', 'a-', 'a.b', ' a', 'x'.repeat(64)];
    const path = file(
      'namespaces',
      'clusters: [{ name: c, cluster: { server: "https://c.example" } }]',
      'users: [{ name: u, user: {} }]',
      `contexts: [${[...good, ...bad].map((ns, i) => `{ name: "n${i}", context: { cluster: c, user: u, namespace: "${ns}" } }`).join(', ')}]`,
    );
    [...good, ...bad].forEach((namespace, i) => {
      const load = () => loadKubeConfig({ kubeconfig: path, context: `n${i}` });
      if (good.includes(namespace)) assert.equal(describeContext(load()).namespace, namespace);
      else assert.throws(load, /which is not a DNS-1123 label/, namespace);
    });
  });

  it('a server may be http or https; a proxy http, https or socks5', () => {
    for (const [server, proxy] of [
      ['http://localhost:8080', undefined],
      ['https://c.example', 'http://proxy:3128'],
      ['https://c.example', 'https://proxy:3128'],
      ['https://c.example', 'socks5://proxy:1080'],
    ] as const) {
      const path = file(
        'schemes',
        `clusters: [{ name: c, cluster: { server: "${server}"${proxy ? `, proxy-url: "${proxy}"` : ''} } }]`,
        'users: [{ name: u, user: {} }]',
        'contexts: [{ name: x, context: { cluster: c, user: u } }]',
        'current-context: x',
      );
      assert.equal(describeContext(loadKubeConfig({ kubeconfig: path })).server, server);
    }
  });

  it("a user's client certificate must be readable", () => {
    const cert = join(dir, 'missing.crt');
    const noCert = file(
      'no-cert',
      'clusters: [{ name: c, cluster: { server: "https://c.example" } }]',
      `users: [{ name: u, user: { client-certificate: "${cert}", client-key: "${flagFile}" } }]`,
      'contexts: [{ name: x, context: { cluster: c, user: u } }]',
      'current-context: x',
    );
    refuses(
      { kubeconfig: noCert },
      'kubeconfig',
      `"${noCert}": context "x" names user "u", whose client-certificate "${cert}" cannot be read: ENOENT`,
    );
  });
});

describe('describeContext of a KubeConfig loaded elsewhere', () => {
  it('has no source, and empty names where the KubeConfig has none', () => {
    assert.deepEqual(describeContext(new KubeConfig()), {
      context: undefined,
      cluster: '',
      server: '',
      user: '',
      namespace: 'default',
    });
  });

  it('a blank namespace is the default one', () => {
    const kc = new KubeConfig();
    kc.loadFromOptions({
      clusters: [{ name: 'c', server: 'https://c.example' }],
      users: [{ name: 'u' }],
      contexts: [{ name: 'x', cluster: 'c', user: 'u', namespace: '  ' }],
      currentContext: 'x',
    });
    assert.equal(describeContext(kc).namespace, 'default');
  });
});

describe('KubeConfigError', () => {
  it('is named, and lists what it tried only when nothing applied', () => {
    const home = join(dir, 'nohome');
    assert.throws(
      () => loadKubeConfig({ env: { HOME: home } }),
      (error: unknown) => {
        assert.ok(error instanceof KubeConfigError);
        assert.equal(error.name, 'KubeConfigError');
        assert.equal(
          error.message,
          'no Kubernetes configuration found; tried: --kubeconfig (not given); KUBECONFIG (not set); ' +
            'in-cluster (KUBERNETES_SERVICE_HOST/KUBERNETES_SERVICE_PORT not set); ' +
            `${join(home, '.kube', 'config')} (does not exist)`,
        );
        return true;
      },
    );
    assert.throws(
      () => loadKubeConfig({ kubeconfig: join(dir, 'nope.yaml') }),
      (error: unknown) => error instanceof KubeConfigError && error.tried.length === 0,
    );
  });

  it('a server that does not parse as a URL is refused', () => {
    const path = file(
      'unparsable',
      'clusters: [{ name: c, cluster: { server: "not a url" } }]',
      'users: [{ name: u, user: {} }]',
      'contexts: [{ name: x, context: { cluster: c, user: u } }]',
      'current-context: x',
    );
    refuses(
      { kubeconfig: path },
      'kubeconfig',
      `"${path}": context "x" names cluster "c", whose server "not a url" is not an http(s) URL`,
    );
  });
});
