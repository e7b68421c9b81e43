/**
 * The README's install commands as the e2e suites read them (no cluster: runs in milliseconds).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { readmeInstall, readmeInstalls, shellCommands, testOnlyArgs } from './readme-install.ts';

test('the root README installs each of the three charts, once, with one helm install each', () => {
  const installs = readmeInstalls();
  assert.deepEqual(
    installs.map((install) => install.chart),
    ['charts/at-scheduler', 'charts/mailgun-cluster', 'charts/cloud-node'],
  );
  for (const install of installs) {
    assert.equal(install.args[0], 'install');
    assert.equal(install.args[2], install.chart);
    // Released under the chart's own name: fullname = release, `deploy/<controller>` as the README says.
    assert.equal(`charts/${install.release}`, install.chart);
  }
});

test("each controller's command, words and values as a shell reads them (continuations, comments)", () => {
  assert.deepEqual(readmeInstall('at-scheduler').args, [
    'install',
    'at-scheduler',
    'charts/at-scheduler',
    '-n',
    'loopwright',
    '--create-namespace',
  ]);
  const mailgun = readmeInstall('mailgun-cluster');
  assert.equal(mailgun.namespace, 'loopwright');
  assert.deepEqual(mailgun.values, {
    'mailgun.domain': 'mg.example.com',
    recipient: 'ops@example.com',
    'mailgun.apiKey.existingSecret': 'mailgun',
  });
  assert.ok(!mailgun.args.some((word) => word.includes('#') || word.includes('\\')), mailgun.args.join(' '));
  const cloudNode = readmeInstall('cloud-node');
  assert.equal(cloudNode.namespace, 'kube-system');
  assert.deepEqual(cloudNode.values, { 'hcloud.token.existingSecret': 'hcloud' });
});

test('shell reading: continuation, comments, quotes; anything but a plain command is refused', () => {
  assert.deepEqual(
    shellCommands(
      [
        '# a comment line',
        'helm install a charts/a \\',
        '  --set \'x=a b\' --set y="c d"   # what y is',
        'helm install b#c charts/b',
      ].join('\n'),
    ),
    [
      ['helm', 'install', 'a', 'charts/a', '--set', 'x=a b', '--set', 'y=c d'],
      ['helm', 'install', 'b#c', 'charts/b'],
    ],
  );
  for (const line of ['helm install a $CHART', 'helm install a b | tee x', 'helm install a "b', 'a; b'])
    assert.throws(() => shellCommands(line), /not a plain command|unterminated/, line);
});

test('the section must be there, with its ```sh block', () => {
  assert.throws(() => readmeInstalls('# Title\n'), /no "## Install in a cluster" section/);
  assert.throws(
    () => readmeInstalls('## Install in a cluster\n\ntext\n## Next\n```sh\n```\n'),
    /no ```sh block/,
  );
  const readme = '## Install in a cluster\n```sh\nhelm install a charts/a --atomic\n```\n';
  assert.throws(() => readmeInstalls(readme), /--atomic is new here/);
});

test('test-only arguments add --wait and where things are, never a value the README sets', () => {
  const cloudNode = readmeInstall('cloud-node');
  assert.deepEqual(
    testOnlyArgs(cloudNode, { timeout: '2m', values: { 'hcloud.endpoint': 'http://h:1/v1' } }),
    ['--wait', '--timeout', '2m', '--set-json', 'hcloud.endpoint="http://h:1/v1"'],
  );
  for (const key of ['hcloud.token.existingSecret', 'hcloud.token', 'hcloud.token.existingSecret.x'])
    assert.throws(() => testOnlyArgs(cloudNode, { timeout: '2m', values: { [key]: 'x' } }), /README's/, key);
});
