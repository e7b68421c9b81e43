/**
 * The README's install commands as the e2e suites read them (no cluster: runs in milliseconds).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  installCommands,
  readmeInstall,
  readmeInstalls,
  readmeSecrets,
  secretData,
  shellCommands,
  testOnlyArgs,
} from './readme-install.ts';

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
  const install = 'helm install b charts/b -n ns --set x.existingSecret=s';
  const secret = 'kubectl -n ns create secret generic s --from-literal=k="$K"';
  const two = readme(
    'helm install a charts/a -n ns --create-namespace',
    `kubectl create namespace ns\n${secret}\n${install}`,
  );
  assert.deepEqual(
    readmeInstalls(two).map((each) => each.chart),
    ['charts/a', 'charts/b'],
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
    [`${secret}\nhelm install b charts/b -n ns --set x.existingSecret="$S"`, /not a plain command/],
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
    () => readmeInstalls('## Install in a cluster\n```sh\nhelm install a charts/a -n ns\n'),
    /unclosed ```sh block/,
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
