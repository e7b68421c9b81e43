import assert from 'node:assert/strict';
import type http from 'node:http';
import type https from 'node:https';
import { describe, it } from 'node:test';
import { KubeConfig, type Context } from '@kubernetes/client-node';
import { FakeClock } from '@loopwright/core/testing';
import { AppliedKubeConfig, REAPPLY_MS } from './applied-config.ts';

/** A KubeConfig of one cluster whose user's bearer token is `token`. */
function tokenConfig(token: string): KubeConfig {
  const config = new KubeConfig();
  config.loadFromOptions({
    clusters: [{ name: 'c', server: 'https://c.example', skipTLSVerify: true }],
    users: [{ name: 'u', token }],
    contexts: [{ name: 'ctx', cluster: 'c', user: 'u' }],
    currentContext: 'ctx',
  });
  return config;
}

function setToken(config: KubeConfig, token: string): void {
  (config.getCurrentUser() as { token?: string }).token = token;
}

/** Replaces `config.applyToHTTPSOptions` by `apply`, counting its calls. */
function instrument(
  config: KubeConfig,
  apply: (options: https.RequestOptions, real: () => Promise<void>) => Promise<void>,
): () => number {
  let calls = 0;
  const real = config.applyToHTTPSOptions.bind(config);
  config.applyToHTTPSOptions = async (options: https.RequestOptions) => {
    calls += 1;
    await apply(options, () => real(options));
  };
  return () => calls;
}

/** The Authorization header that `applied` sets on a request without headers. */
async function authorization(applied: AppliedKubeConfig): Promise<unknown> {
  const options: https.RequestOptions = {};
  await applied.applyTo(options);
  return (options.headers as http.OutgoingHttpHeaders | undefined)?.Authorization;
}

describe('AppliedKubeConfig', () => {
  it("sets the KubeConfig's credentials, TLS options and agent, its headers over the request's", async () => {
    const config = tokenConfig('first');
    const applied = new AppliedKubeConfig(config, new FakeClock());
    const options: https.RequestOptions = {
      path: '/api',
      headers: { Authorization: 'Bearer the-caller', 'X-Caller': 'kept' },
    };
    await applied.applyTo(options);
    assert.equal(options.path, '/api');
    assert.deepEqual(options.headers, { Authorization: 'Bearer first', 'X-Caller': 'kept' });
    assert.equal(options.rejectUnauthorized, false);
    assert.ok(options.agent, 'the KubeConfig agent');
    assert.equal(await authorization(applied), 'Bearer first', 'a request without headers of its own');
  });

  it('reuses one application for REAPPLY_MS, then applies the KubeConfig again', async () => {
    const config = tokenConfig('first');
    const applications = instrument(config, (_, real) => real());
    const clock = new FakeClock();
    const applied = new AppliedKubeConfig(config, clock);
    assert.deepEqual(
      await Promise.all([authorization(applied), authorization(applied)]),
      ['Bearer first', 'Bearer first'],
      'requests that start together share one application',
    );
    setToken(config, 'second');
    clock.step(REAPPLY_MS - 1);
    assert.equal(await authorization(applied), 'Bearer first');
    assert.equal(applications(), 1);
    clock.step(1);
    assert.equal(await authorization(applied), 'Bearer second');
    setToken(config, 'third');
    clock.step(REAPPLY_MS - 1);
    assert.equal(await authorization(applied), 'Bearer second', 'the period runs from the new application');
    clock.step(1);
    assert.equal(await authorization(applied), 'Bearer third');
    assert.equal(applications(), 3);
  });

  it('does not keep a failed application: the next request applies the KubeConfig again', async () => {
    const config = tokenConfig('token');
    let fail = true;
    const applications = instrument(config, async (_, real) => {
      if (fail) throw new Error('exec plugin failed');
      await real();
    });
    const applied = new AppliedKubeConfig(config, new FakeClock());
    await assert.rejects(applied.applyTo({}), /exec plugin failed/);
    fail = false;
    assert.equal(await authorization(applied), 'Bearer token');
    assert.equal(applications(), 2);
  });

  it('an old application that fails late does not discard the newer one', async () => {
    const config = tokenConfig('token');
    let rejectFirst: (error: Error) => void = () => undefined;
    const applications = instrument(config, (_, real) =>
      applications() === 1
        ? new Promise<void>((_resolve, reject) => {
            rejectFirst = reject;
          })
        : real(),
    );
    const clock = new FakeClock();
    const applied = new AppliedKubeConfig(config, clock);
    const first = applied.applyTo({});
    clock.step(REAPPLY_MS);
    assert.equal(await authorization(applied), 'Bearer token');
    rejectFirst(new Error('exec plugin timed out'));
    await assert.rejects(first, /exec plugin timed out/);
    assert.equal(await authorization(applied), 'Bearer token');
    assert.equal(applications(), 2, 'the newer application is still in use');
  });
});

describe('AppliedKubeConfig without a user', () => {
  it("keeps the request's headers and sets no credentials", async () => {
    const config = new KubeConfig();
    config.loadFromOptions({
      clusters: [{ name: 'c', server: 'https://c.example' }],
      users: [],
      // client-node lets a context name no user, whatever its type says.
      contexts: [{ name: 'ctx', cluster: 'c' } as Context],
      currentContext: 'ctx',
    });
    const options: https.RequestOptions = { headers: { 'X-Caller': 'kept' } };
    await new AppliedKubeConfig(config, new FakeClock()).applyTo(options);
    assert.deepEqual(options.headers, { 'X-Caller': 'kept' });
    assert.ok(options.agent);
  });
});
