import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { formatHelp } from './help.ts';
import type { Program } from './program.ts';

const info = { name: 'cloud-node', version: '0.1.0', description: 'Hetzner Cloud Node controllers' };
const program: Program = {
  packageJson: new URL('file:///unused/package.json'),
  variables: [
    { name: 'HCLOUD_TOKEN', description: 'API token; required' },
    { name: 'NODE_MONITOR_PERIOD', description: 'lifecycle check period', default: '5s' },
  ],
  flags: [{ name: '--node-monitor-period', variable: 'NODE_MONITOR_PERIOD' }],
};

describe('formatHelp', () => {
  it('names the program, its flags and every variable with its default, in aligned columns', () => {
    assert.equal(
      formatHelp(program, info),
      [
        'cloud-node 0.1.0: Hetzner Cloud Node controllers',
        '',
        'Usage: cloud-node [flags]',
        '',
        'Configured by the environment variables below; a flag overrides the variable it names.',
        'Exit status: 0 after SIGTERM or SIGINT; 1 on invalid configuration, a failed start or lost',
        'leadership; 2 on a bad argument.',
        '',
        'Flags:',
        '  --node-monitor-period <value>  overrides NODE_MONITOR_PERIOD',
        '  -h, --help                     print this help and exit',
        '  --version                      print "cloud-node <version>" and exit',
        '',
        'Environment:',
        '  HCLOUD_TOKEN                   API token; required',
        '  NODE_MONITOR_PERIOD            lifecycle check period (default: 5s)',
        '',
      ].join('\n'),
    );
  });

  it('without value flags: only --help and --version, and no word about overriding', () => {
    const text = formatHelp({ ...program, flags: [] }, { ...info, description: '' });
    assert.match(text, /^cloud-node 0\.1\.0\n/);
    assert.match(text, /^Configured by the environment variables below\.$/m);
    assert.doesNotMatch(text, /<value>|overrides/);
    assert.match(text, /^Flags:\n {2}-h, --help +print this help and exit\n {2}--version +print/m);
  });
});
