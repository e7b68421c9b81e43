import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { KubeConfigError, loadKubeConfig } from '@loopwright/client';
import { kubeConfigValueError, loadKubeConfigOptions } from './kube-config-options.ts';

const dir = mkdtempSync(join(tmpdir(), 'kube-config-options-test-'));
after(() => {
  rmSync(dir, { recursive: true, force: true });
});
const kubeconfig = join(dir, 'kubeconfig');
writeFileSync(
  kubeconfig,
  [
    'apiVersion: v1',
    'kind: Config',
    'clusters: [{ name: c, cluster: { server: "https://c.example" } }]',
    'users: [{ name: u, user: { token: s3cret-token } }]',
    'contexts: [{ name: dev, context: { cluster: c, user: u } }, { name: prod, context: { cluster: c, user: u } }]',
    'current-context: dev',
  ].join('\n'),
);

describe('loadKubeConfigOptions', () => {
  it('the flag: its one file, whatever KUBECONFIG holds', () => {
    assert.deepEqual(
      loadKubeConfigOptions(
        { kubeconfig: '/a:/b', context: 'dev' },
        { kubeconfig: '--kubeconfig' },
        { KUBECONFIG: '/c', HOME: '/h' },
      ),
      { kubeconfig: '/a:/b', context: 'dev', env: { KUBECONFIG: undefined, HOME: '/h' } },
    );
  });

  it('the variable: the list as the option resolved it (trimmed); unset: none, even a blank one', () => {
    assert.deepEqual(
      loadKubeConfigOptions(
        { kubeconfig: '/a:/b', context: undefined },
        { kubeconfig: 'KUBECONFIG' },
        {
          KUBECONFIG: ' /a:/b ',
        },
      ),
      { env: { KUBECONFIG: '/a:/b' } },
    );
    assert.deepEqual(
      loadKubeConfigOptions(
        { kubeconfig: undefined, context: undefined },
        { kubeconfig: undefined },
        {
          KUBECONFIG: '  ',
        },
      ),
      { env: { KUBECONFIG: undefined } },
    );
  });
});

describe('kubeConfigValueError', () => {
  /** What runController prints (before " (see --help)") for a kubeconfig set so, and that context. */
  function refusal(
    standard: { kubeconfig?: string; context?: string },
    setBy: { kubeconfig?: string; context?: string },
  ): string {
    const options = loadKubeConfigOptions(
      { kubeconfig: standard.kubeconfig, context: standard.context },
      { kubeconfig: setBy.kubeconfig },
      { HOME: join(dir, 'no-home') },
    );
    try {
      loadKubeConfig({ ...options, serviceAccountDir: join(dir, 'none') });
    } catch (error) {
      assert.ok(error instanceof KubeConfigError);
      const refused = kubeConfigValueError(error, { kubeconfig: setBy.kubeconfig, context: setBy.context });
      assert.doesNotMatch(
        refused.message,
        /s3cret-token|c\.example/,
        'names only, no credentials or servers',
      );
      return refused.message;
    }
    assert.fail('loaded');
  }

  it('a context the kubeconfig lacks: named as set, with where the kubeconfig came from and its contexts', () => {
    assert.equal(
      refusal({ kubeconfig, context: 'no-such-context' }, { kubeconfig: 'KUBECONFIG', context: 'CONTEXT' }),
      `CONTEXT: expected a context of KUBECONFIG "${kubeconfig}" (dev, prod), got "no-such-context"`,
    );
    assert.equal(
      refusal(
        { kubeconfig, context: 'no-such-context' },
        { kubeconfig: '--kubeconfig', context: '--context' },
      ),
      `--context: expected a context of --kubeconfig "${kubeconfig}" (dev, prod), got "no-such-context"`,
    );
  });

  it('a kubeconfig that does not exist: named as set, or by both names when it was the default', () => {
    const missing = join(dir, 'missing');
    assert.equal(
      refusal({ kubeconfig: missing }, { kubeconfig: '--kubeconfig' }),
      `--kubeconfig: "${missing}" does not exist`,
    );
    assert.equal(
      refusal({ kubeconfig: missing }, { kubeconfig: 'KUBECONFIG' }),
      `KUBECONFIG: none of its files exist ("${missing}")`,
    );
    assert.match(
      refusal({}, {}),
      /^--kubeconfig \/ KUBECONFIG: no Kubernetes configuration found; tried: .*no-home\/\.kube\/config \(does not exist\)$/,
    );
  });

  it('no context chosen where one is needed: --context / CONTEXT, as a missing value', () => {
    const noCurrent = join(dir, 'no-current');
    writeFileSync(
      noCurrent,
      'apiVersion: v1\nkind: Config\nclusters: [{ name: c, cluster: { server: "https://c.example" } }]\n',
    );
    assert.equal(
      refusal({ kubeconfig: noCurrent }, { kubeconfig: '--kubeconfig' }),
      `--context / CONTEXT: required: "${noCurrent}" sets no current-context (it has none)`,
    );
  });
});
