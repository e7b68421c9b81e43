/**
 * The README's install commands as the e2e suites read them (no cluster: runs in milliseconds).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  chartName,
  fromRegistry,
  installCommands,
  readmeInstall,
  readmeInstalls,
  readmeSecrets,
  secretData,
  shellCommands,
  testOnlyArgs,
} from './readme-install.ts';

test('the root README installs each of the three released charts, once, with one helm install each', () => {
  const installs = readmeInstalls();
  assert.deepEqual(
    installs.map((install) => install.chart),
    [
      'oci://ghcr.io/loopwright/charts/at-scheduler',
      'oci://ghcr.io/loopwright/charts/mailgun-cluster',
      'oci://ghcr.io/loopwright/charts/cloud-node',
    ],
  );
  for (const install of installs) {
    assert.equal(install.args[0], 'install');
    assert.equal(install.args[2], install.chart);
    // Released under the chart's own name: fullname = release, `deploy/<controller>` as the README says.
    assert.equal(chartName(install.chart), install.release);
  }
  // One release: the global setup publishes this version and the suites install it.
  assert.deepEqual(new Set(installs.map((install) => install.version)).size, 1);
});

test('the README installs the version of the charts in this checkout (their appVersion)', async () => {
  const { chartDefaultImage } = await import('@loopwright/cluster');
  for (const install of readmeInstalls())
    assert.equal(install.version, (await chartDefaultImage(install.release)).appVersion, install.chart);
});

test('fromRegistry swaps the registry of the chart, and nothing else', () => {
  const install = readmeInstall('at-scheduler');
  const local = fromRegistry(install, '127.0.0.1:5000');
  assert.equal(local.chart, 'oci://127.0.0.1:5000/loopwright/charts/at-scheduler');
  assert.deepEqual(
    local.args,
    install.args.map((arg) => (arg === install.chart ? local.chart : arg)),
  );
  assert.notDeepEqual(local.args, install.args);
  assert.equal(local.version, install.version);
  assert.throws(() => chartName('charts/at-scheduler'), /not a released chart/);
  assert.throws(() => chartName('oci://ghcr.io/loopwright/at-scheduler'), /not a released chart/);
});

test("each controller's command, words and values as a shell reads them (continuations, comments)", () => {
  assert.deepEqual(readmeInstall('at-scheduler').args, [
    'install',
    'at-scheduler',
    'oci://ghcr.io/loopwright/charts/at-scheduler',
    '--version',
    '0.1.0',
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

test('the Secrets the README has the user create: namespace, name, each key and its variable', () => {
  assert.deepEqual(readmeSecrets('at-scheduler'), []);
  assert.deepEqual(readmeSecrets('mailgun-cluster'), [
    { namespace: 'loopwright', name: 'mailgun', variables: { 'api-key': 'MAILGUN_API_KEY' } },
  ]);
  assert.deepEqual(readmeSecrets('cloud-node'), [
    {
      namespace: 'kube-system',
      name: 'hcloud',
      variables: { token: 'HCLOUD_TOKEN', network: 'HCLOUD_NETWORK' },
    },
  ]);
});

test("a Secret's data: every README key with its variable's value, no variable missing or extra", () => {
  const [secret] = readmeSecrets('cloud-node');
  assert.ok(secret);
  assert.deepEqual(secretData(secret, { HCLOUD_TOKEN: 't', HCLOUD_NETWORK: 'n' }), {
    token: 't',
    network: 'n',
  });
  assert.throws(() => secretData(secret, { HCLOUD_TOKEN: 't' }), /no value for HCLOUD_NETWORK \(key network/);
  assert.throws(
    () => secretData(secret, { HCLOUD_TOKEN: 't', HCLOUD_NETWORK: 'n', HCLOUD_ENDPOINT: 'e' }),
    /has no key written as HCLOUD_ENDPOINT/,
  );
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

test('shell reading: a variable only as a whole double-quoted "$NAME" word or value after =', () => {
  assert.deepEqual(shellCommands('k --from-literal=api-key="$API_KEY" "$X"   # the key'), [
    ['k', { prefix: '--from-literal=api-key=', variable: 'API_KEY' }, { prefix: '', variable: 'X' }],
  ]);
  // Single quotes keep a dollar sign as text, as a shell does.
  assert.deepEqual(shellCommands("k '$X'"), [['k', '$X']]);
  for (const line of [
    'k --from-literal=a=$X',
    'k --from-literal=a="${X}"',
    'k --from-literal=a="$X"b',
    'k --from-literal=a="$X$Y"',
    'k --from-literal=a="the $X"',
    'k --from-literal=a="$(cat key)"',
    'k a"$X"',
    'k "$1"',
  ])
    assert.throws(() => shellCommands(line), /not a plain command/, line);
});

test('install commands: every ```sh block of the section; Secrets only as the installs reference them', () => {
  const readme = (...blocks: string[]) =>
    `## Install in a cluster\n\n${blocks.map((block) => `\`\`\`sh\n${block}\n\`\`\`\n`).join('\ntext\n\n')}## Next\n`;
  const install = 'helm install b oci://r/o/charts/b --version 1.0.0 -n ns --set x.existingSecret=s';
  const secret = 'kubectl -n ns create secret generic s --from-literal=k="$K"';
  const two = readme(
    'helm install a oci://r/o/charts/a --version 1.0.0 -n ns --create-namespace',
    `kubectl create namespace ns\n${secret}\n${install}`,
  );
  assert.deepEqual(
    readmeInstalls(two).map((each) => each.chart),
    ['oci://r/o/charts/a', 'oci://r/o/charts/b'],
  );
  assert.deepEqual(readmeSecrets('b', two), [{ namespace: 'ns', name: 's', variables: { k: 'K' } }]);
  assert.deepEqual(readmeSecrets('a', two), []);
  // The namespace flag may come anywhere, as kubectl reads it.
  assert.deepEqual(
    installCommands(`kubectl create secret generic s --from-literal=k="$K" --namespace=ns\n${install}`)
      .secrets,
    [{ namespace: 'ns', name: 's', variables: { k: 'K' } }],
  );
  const refused: [string, RegExp][] = [
    [
      `kubectl -n ns create secret generic s --from-literal=k=literal\n${install}`,
      /--from-literal=k=literal is new/,
    ],
    [`kubectl create secret generic s --from-literal=k="$K"\n${install}`, /no namespace/],
    [`kubectl -n ns create secret tls s --cert="$C"\n${install}`, /not `create secret generic <name>`/],
    [`kubectl -n ns create secret generic s --from-file=k="$K"\n${install}`, /is not --from-literal=<key>=/],
    [`kubectl -n ns create secret generic s\n${install}`, /no --from-literal/],
    [
      `kubectl -n other create secret generic s --from-literal=k="$K"\n${install}`,
      /other\/s is no existingSecret/,
    ],
    [
      `${secret}\nhelm install b oci://r/o/charts/b --version 1.0.0 -n ns --set x.existingSecret="$S"`,
      /not a plain command/,
    ],
    [
      `${secret}\nhelm install b charts/b --version 1.0.0 -n ns --set x.existingSecret=s`,
      /not a released chart/,
    ],
    [`${secret}\nhelm install b oci://r/o/charts/b -n ns --set x.existingSecret=s`, /no --version/],
    [`${secret}\n${install}\nkubectl apply -f "$FILE"`, /not a plain command/],
  ];
  for (const [block, error] of refused) assert.throws(() => installCommands(block), error, block);
});

test('the section must be there, with its ```sh blocks closed', () => {
  assert.throws(() => readmeInstalls('# Title\n'), /no "## Install in a cluster" section/);
  assert.throws(
    () => readmeInstalls('## Install in a cluster\n\ntext\n## Next\n```sh\n```\n'),
    /no ```sh block/,
  );
  assert.throws(
    () => readmeInstalls('## Install in a cluster\n```sh\nhelm install a oci://r/o/charts/a -n ns\n'),
    /unclosed ```sh block/,
  );
  const readme = '## Install in a cluster\n```sh\nhelm install a oci://r/o/charts/a --atomic\n```\n';
  assert.throws(() => readmeInstalls(readme), /--atomic is new here/);
});

test('test-only arguments add --plain-http, --wait and where things are, never a value the README sets', () => {
  const cloudNode = readmeInstall('cloud-node');
  assert.deepEqual(
    testOnlyArgs(cloudNode, { timeout: '2m', values: { 'hcloud.endpoint': 'http://h:1/v1' } }),
    ['--plain-http', '--wait', '--timeout', '2m', '--set-json', 'hcloud.endpoint="http://h:1/v1"'],
  );
  for (const key of ['hcloud.token.existingSecret', 'hcloud.token', 'hcloud.token.existingSecret.x'])
    assert.throws(() => testOnlyArgs(cloudNode, { timeout: '2m', values: { [key]: 'x' } }), /README's/, key);
});
