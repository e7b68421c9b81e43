/**
 * The at-scheduler chart: the shared contract (chart-contract.ts), then what is its own: the At's
 * default image, its resources, its exact env.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { assertEnvKnownToController, assertSchemaRejects } from './chart-assertions.ts';
import { testChartContract } from './chart-contract.ts';
import { controllerContainer, envOf, one, render } from './charts.ts';

const chart = 'at-scheduler';

testChartContract({ chart, watchNamespaces: true, sharding: true });

describe('at-scheduler chart', () => {
  test('default Deployment: resources, and exactly this env', async () => {
    const container = controllerContainer(one(await render(chart), 'Deployment'));
    assert.deepEqual(container.resources, {
      requests: { cpu: '50m', memory: '128Mi' },
      limits: { memory: '256Mi' },
    });
    const env = envOf(container);
    assert.deepEqual(env, {
      POD_NAME: JSON.stringify({ fieldRef: { fieldPath: 'metadata.name' } }),
      POD_NAMESPACE: JSON.stringify({ fieldRef: { fieldPath: 'metadata.namespace' } }),
      DEFAULT_IMAGE: 'busybox:1.37.0',
      WORKERS: '16',
      LEADER_ELECT: 'true',
      LEADER_ELECTION_NAMESPACE: 'controllers',
      LEADER_ELECTION_ID: 'at-scheduler',
      WARM_STANDBY: 'true',
      METRICS_BIND_ADDRESS: ':8080',
      HEALTH_PROBE_BIND_ADDRESS: ':8081',
      KUBE_API_QPS: '-1',
      KUBE_API_BURST: '1000',
      LOG_LEVEL: 'info',
      LOG_FORMAT: 'json',
    });
    assertEnvKnownToController(env, chart);
  });

  test('defaultImage reaches DEFAULT_IMAGE', async () => {
    const image = 'busybox@sha256:' + 'a'.repeat(64);
    const deployment = one(await render(chart, { values: { defaultImage: image } }), 'Deployment');
    assert.equal(envOf(controllerContainer(deployment)).DEFAULT_IMAGE, image);
  });

  test('values.schema.json rejects a defaultImage that is not a string', async () => {
    await assertSchemaRejects(chart, 'defaultImage=1');
  });
});
