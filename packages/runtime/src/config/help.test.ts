import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { formatHelp } from './help.ts';
import { integer, text } from './kinds.ts';
import { option, secret } from './option.ts';
import { defineProgram, standardOptionsOf } from './program.ts';

const program = defineProgram({
  name: 'example',
  packageJson: new URL('file:///unused/package.json'),
  workers: 3,
  reconcileTimeout: '0',
  namespaced: true,
  options: {
    greeting: option(text(), { flag: '--greeting', description: 'what to say', default: 'hello' }),
    count: option(integer(1, 10), { flag: '--count', description: 'how often', required: true }),
    colour: option(text({ placeholder: '<colour>' }), {
      flag: '--colour',
      description: 'ink',
      unset: 'black',
    }),
    token: secret({
      fileFlag: '--api-token-file',
      description: 'the API token',
      expected: 'a token',
      valid: () => true,
    }),
  },
});
const info = { name: 'example', version: '1.2.3', description: 'Does one thing' };

describe('formatHelp', () => {
  const help = formatHelp(program, info);

  it('names the program, the naming rule and the exit statuses', () => {
    assert.match(help, /^example 1\.2\.3: Does one thing\n\nUsage: example \[flags\]\n\n/);
    assert.match(help, /\(--leader-election-id is LEADER_ELECTION_ID\); a flag wins over its variable/);
    assert.match(
      help,
      /1 when start-up fails or leadership is lost; 2 for a bad\nargument or value, also one naming what does not exist \(a kubeconfig file or context, say\)\./,
    );
    assert.match(formatHelp(program, { ...info, description: '' }), /^example 1\.2\.3\n/);
  });

  it('lists its own flags first, each with its variable, what it takes and what unset means', () => {
    const own = help.slice(help.indexOf('Flags of example:\n'), help.indexOf('Standard flags:'));
    assert.equal(
      own,
      [
        'Flags of example:',
        '  --greeting <string>  (GREETING)',
        '        what to say; a string (default "hello")',
        '  --count <int>  (COUNT)',
        '        how often; an integer from 1 to 10; required',
        '  --colour <colour>  (COLOUR)',
        '        ink; a string (unset: black)',
        '  --api-token-file <path>  (API_TOKEN_FILE)',
        '        file holding the API token, re-read when it changes; or the value itself in API_TOKEN',
        '        (environment only); required',
        '',
        '',
      ].join('\n'),
    );
  });

  it('then every standard flag, with this program’s defaults, and --help/--version', () => {
    // Descriptions wrap onto indented lines: joined here, so that a match does not depend on where.
    const standard = help.slice(help.indexOf('Standard flags:')).replace(/\n {8}(?=\S)/g, ' ');
    for (const { flag, variable } of Object.values(standardOptionsOf(program)))
      assert.match(standard, new RegExp(`^ {2}${flag}( \\S+)? {2}\\(${variable}\\) `, 'm'), flag);
    assert.match(standard, /--leader-election-id <name> {2}\(LEADER_ELECTION_ID\) .*\(default "example"\)$/m);
    assert.match(standard, /--workers <int> {2}\(WORKERS\) .*\(default "3"\)$/m);
    assert.match(standard, /^ {2}--leader-elect {2}\(LEADER_ELECT\) /m, 'a bool flag takes no value');
    assert.match(
      standard,
      /^ {2}-h, --help print this help and exit\n {2}--version print "example <version>" and exit$/m,
    );
    assert.match(standard, /KUBERNETES_SERVICE_HOST, KUBERNETES_SERVICE_PORT/);
  });

  it('a cluster-scoped program has no --watch-namespace; no line is wider than 100 columns', () => {
    assert.match(help, /--watch-namespace/);
    assert.doesNotMatch(formatHelp({ ...program, namespaced: false }, info), /--watch-namespace/);
    for (const line of help.split('\n')) assert.ok(line.length <= 100, line);
  });
});
