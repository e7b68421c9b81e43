import { writeSecretVolume } from '@loopwright/envtest';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { ConfigError } from './config-error.ts';
import { boolean, dnsLabel, duration, httpUrl, integer, listOf, oneOf, text } from './kinds.ts';
import { nameAsSet, option, secret, variableOf } from './option.ts';
import { optionsTable } from './options-table.ts';
import { defineProgram, parseProgram, type Configuration } from './program.ts';
import type { Env } from './resolve.ts';

const dir = mkdtempSync(join(tmpdir(), 'program-test-'));
after(() => {
  rmSync(dir, { recursive: true, force: true });
});
const tokenFile = writeSecretVolume(join(dir, 'volume'), { token: 'token-from-file\n' }).token ?? '';

const program = defineProgram({
  name: 'example',
  packageJson: new URL('file:///unused/package.json'),
  workers: 4,
  reconcileTimeout: '90s',
  namespaced: true,
  options: {
    greeting: option(text(), { flag: '--greeting', description: 'what to say', default: 'hello' }),
    count: option(integer(1, 10), { flag: '--count', description: 'how often', required: true }),
    loud: option(boolean, { flag: '--loud', description: 'shout', default: 'false' }),
    colour: option(oneOf(['red', 'green']), { flag: '--colour', description: 'ink' }),
    period: option(duration('10ms', '1h'), { flag: '--period', description: 'pause', default: '5s' }),
    zones: option(listOf(dnsLabel, 'zone names, comma-separated'), { flag: '--zone', description: 'zones' }),
    endpoint: option(httpUrl('https://api.example.com'), {
      flag: '--endpoint',
      description: 'API',
      default: 'https://api.example.com/',
    }),
    token: secret({
      fileFlag: '--api-token-file',
      description: 'the API token',
      expected: 'a token without whitespace',
      valid: (value) => !/\s/.test(value),
    }),
  },
  check: (values, setBy) => {
    if (values.loud && values.colour === 'green')
      throw new ConfigError(setBy.colour ?? '--colour', 'green cannot be loud');
  },
});

const REQUIRED = { COUNT: '3', API_TOKEN: 's3cret-token' };

function parse(argv: string[], env: Env = REQUIRED): Configuration<typeof program.options> {
  const parsed = parseProgram(program, argv, env);
  assert.equal(parsed.action, 'run');
  return parsed;
}

/** The one line a bad argument or value gives, checked to be one line that never shows the secret. */
function problem(argv: string[], env: Env): string {
  try {
    parseProgram(program, argv, env);
  } catch (error) {
    assert.ok(error instanceof ConfigError, String(error));
    assert.doesNotMatch(error.message, /\n|s3cret|bad token/);
    return error.message;
  }
  assert.fail(`accepted ${JSON.stringify([argv, env])}`);
}

describe('parseProgram: own options', () => {
  it('unset: the defaults, parsed as if given', () => {
    const { config } = parse([]);
    assert.equal(config.greeting, 'hello');
    assert.equal(config.count, 3);
    assert.equal(config.loud, false);
    assert.equal(config.colour, undefined);
    assert.equal(config.period, 5000);
    assert.equal(config.zones, undefined);
    assert.equal(config.endpoint, 'https://api.example.com');
    assert.equal(config.token.value(), 's3cret-token');
    assert.equal(config.token.source, 'API_TOKEN');
  });

  it('every kind from its variable; empty values are unset', () => {
    const { config } = parse([], {
      ...REQUIRED,
      GREETING: ' hi there ',
      LOUD: 'true',
      COLOUR: 'RED',
      PERIOD: '1m30s',
      ZONE: 'a, b',
      ENDPOINT: '',
    });
    assert.deepEqual(
      [config.greeting, config.loud, config.colour, config.period, config.zones, config.endpoint],
      ['hi there', true, 'red', 90_000, ['a', 'b'], 'https://api.example.com'],
    );
  });

  it('a flag wins over its variable: --flag value, --flag=value; bool flags take no value', () => {
    const env = { ...REQUIRED, GREETING: 'from env', COUNT: '9', LOUD: 'true', COLOUR: 'green' };
    const { config } = parse(['--greeting', 'from flag', '--count=2', '--loud=false', '--colour='], env);
    // `--colour=` is given, and empty: unset, whatever the variable says.
    assert.deepEqual(
      [config.greeting, config.count, config.loud, config.colour],
      ['from flag', 2, false, undefined],
    );
    assert.equal(parse(['--loud'], { ...REQUIRED, LOUD: 'false' }).config.loud, true);
  });

  it('a repeated flag: the last value, or every value for a list', () => {
    const { config } = parse(['--greeting=a', '--greeting=b', '--zone', 'x,y', '--zone=z', '--zone', 'x']);
    assert.equal(config.greeting, 'b');
    assert.deepEqual(config.zones, ['x', 'y', 'z']);
  });

  it('a bad value: one line naming the flag or the variable the user set, and what it expects', () => {
    const cases: [string[], Env, string][] = [
      [[], { ...REQUIRED, COUNT: '0' }, 'COUNT: expected an integer from 1 to 10, got "0"'],
      [['--count', '11'], REQUIRED, '--count: expected an integer from 1 to 10, got "11"'],
      [['--loud=maybe'], REQUIRED, '--loud: expected true or false, got "maybe"'],
      [[], { ...REQUIRED, COLOUR: 'blue' }, 'COLOUR: expected one of red, green, got "blue"'],
      [
        ['--period=5'],
        { ...REQUIRED, PERIOD: 'bad too' },
        '--period: expected a duration from 10ms to 1h, like 1m30s, got "5"',
      ],
      [[], { ...REQUIRED, ZONE: 'a,,b' }, 'ZONE: expected zone names, comma-separated, got "a,,b"'],
      [
        [],
        { ...REQUIRED, ENDPOINT: 'ftp://x' },
        'ENDPOINT: expected an http(s) URL such as https://api.example.com, got "ftp://x"',
      ],
      [[], { API_TOKEN: 'x' }, '--count / COUNT: required: how often (an integer from 1 to 10)'],
      [['--colour=green', '--loud'], REQUIRED, '--colour: green cannot be loud'],
    ];
    for (const [argv, env, message] of cases)
      assert.equal(problem(argv, env), message, JSON.stringify([argv, env]));
  });

  it('the command line: unknown arguments by name only, flags without their value', () => {
    const cases: [string[], string][] = [
      [['--bogus'], '--bogus: unknown argument'],
      [['serve'], 'serve: unknown argument'],
      [['-count=3'], '-count=3: unknown argument'],
      [['--help=yes'], '--help: unknown argument'],
      // Only the name: the value of a mistyped flag may be a secret.
      [['--api-token=s3cret'], '--api-token: unknown argument'],
      [['--count'], '--count: needs a value'],
      [['--bogus', '--help'], '--bogus: unknown argument'],
    ];
    for (const [argv, message] of cases) assert.equal(problem(argv, REQUIRED), message, argv.join(' '));
  });

  it('--help, -h and --version win when they come first, before any value is read', () => {
    for (const argv of [['--help'], ['-h', '--bogus'], ['--count=99', '--help']])
      assert.deepEqual(parseProgram(program, argv, {}), { action: 'help' });
    assert.deepEqual(parseProgram(program, ['--version'], {}), { action: 'version' });
  });
});

describe('parseProgram: secrets', () => {
  it("whenBothSet 'variable': the value itself wins over the file variable, which is not read; a file flag still wins", () => {
    const replacing = defineProgram({
      name: 'replacing',
      packageJson: new URL('file:///unused/package.json'),
      workers: 1,
      reconcileTimeout: '0',
      namespaced: true,
      options: {
        token: secret({
          fileFlag: '--api-token-file',
          description: 'the API token',
          expected: 'a token without whitespace',
          valid: (value) => !/\s/.test(value),
          whenBothSet: 'variable',
        }),
      },
    });
    const tokenOf = (argv: string[], env: Env) => {
      const parsed = parseProgram(replacing, argv, env);
      assert.equal(parsed.action, 'run');
      const { token } = parsed.config;
      return [token.value(), token.source];
    };
    const missing = join(dir, 'not-there');
    assert.deepEqual(tokenOf([], { API_TOKEN: 'from-variable', API_TOKEN_FILE: missing }), [
      'from-variable',
      'API_TOKEN',
    ]);
    assert.deepEqual(tokenOf([], { API_TOKEN: ' ', API_TOKEN_FILE: tokenFile }), [
      'token-from-file',
      'API_TOKEN_FILE',
    ]);
    assert.deepEqual(tokenOf(['--api-token-file', tokenFile], { API_TOKEN: 'from-variable' }), [
      'token-from-file',
      '--api-token-file',
    ]);
  });

  it('from the file named by the flag or variable, else from the variable; the flag wins', () => {
    const fromFile = parse([], { COUNT: '3', API_TOKEN_FILE: tokenFile }).config.token;
    assert.deepEqual([fromFile.value(), fromFile.source], ['token-from-file', 'API_TOKEN_FILE']);
    const fromFlag = parse(['--api-token-file', tokenFile], { ...REQUIRED }).config.token;
    assert.deepEqual([fromFlag.value(), fromFlag.source], ['token-from-file', '--api-token-file']);
  });

  it('problems name the variable or the file, never the value', () => {
    const cases: [string[], Env, string][] = [
      [
        [],
        { COUNT: '3' },
        'API_TOKEN / API_TOKEN_FILE: required: the API token, or the path of a file holding it',
      ],
      [
        [],
        { ...REQUIRED, API_TOKEN_FILE: tokenFile },
        'API_TOKEN_FILE: set either API_TOKEN or API_TOKEN_FILE, not both',
      ],
      [[], { COUNT: '3', API_TOKEN: 'bad token' }, 'API_TOKEN: expected a token without whitespace'],
      [
        ['--api-token-file', join(dir, 'missing')],
        { COUNT: '3' },
        `--api-token-file: cannot read "${join(dir, 'missing')}": ENOENT`,
      ],
    ];
    for (const [argv, env, message] of cases) assert.equal(problem(argv, env), message, JSON.stringify(env));
  });
});

describe('parseProgram: standard options', () => {
  it("defaults: controller-runtime's, with the program's Lease name, workers and reconcile timeout", () => {
    const { standard, setBy } = parse([]);
    assert.deepEqual(standard, {
      kubeconfig: undefined,
      context: undefined,
      leaderElect: true,
      leaderElectionNamespace: undefined,
      leaderElectionId: 'example',
      leaseDuration: 15_000,
      renewDeadline: 10_000,
      retryPeriod: 2_000,
      healthProbeBindAddress: { host: undefined, port: 8081 },
      metricsBindAddress: { host: undefined, port: 8080 },
      cacheDumpBindAddress: false,
      kubeApiQps: -1,
      kubeApiBurst: 1000,
      logLevel: 'info',
      logFormat: undefined,
      workers: 4,
      reconcileTimeout: 90_000,
      warmStandby: true,
      podName: undefined,
      podNamespace: undefined,
      watchNamespace: undefined,
    });
    assert.equal(setBy.standard.kubeconfig, undefined);
    assert.equal(setBy.standard.workers, undefined, 'a default is set by nothing');
    assert.equal(setBy.config.count, 'COUNT');
    assert.equal(setBy.config.token, 'API_TOKEN');
    assert.equal(setBy.config.greeting, undefined);
  });

  it('each flag has its variable by one rule, and wins over it', () => {
    const env: Record<string, string> = {
      ...REQUIRED,
      KUBECONFIG: '/a:/b',
      CONTEXT: 'dev',
      LEADER_ELECT: 'false',
      LEADER_ELECTION_NAMESPACE: 'ops',
      LEADER_ELECTION_ID: 'example.lease',
      LEADER_ELECT_LEASE_DURATION: '30s',
      LEADER_ELECT_RENEW_DEADLINE: '20s',
      LEADER_ELECT_RETRY_PERIOD: '5s',
      HEALTH_PROBE_BIND_ADDRESS: '127.0.0.1:9000',
      METRICS_BIND_ADDRESS: '0',
      CACHE_DUMP_BIND_ADDRESS: '127.0.0.1:9100',
      KUBE_API_QPS: '12.5',
      KUBE_API_BURST: '80',
      LOG_LEVEL: 'debug',
      LOG_FORMAT: 'console',
      WORKERS: '7',
      RECONCILE_TIMEOUT: '0',
      WARM_STANDBY: 'false',
      POD_NAME: 'example-7d9f-x2',
      POD_NAMESPACE: 'ops',
      WATCH_NAMESPACE: 'a,b',
    };
    const fromEnv = parse([], env);
    assert.deepEqual(fromEnv.standard, {
      kubeconfig: '/a:/b',
      context: 'dev',
      leaderElect: false,
      leaderElectionNamespace: 'ops',
      leaderElectionId: 'example.lease',
      leaseDuration: 30_000,
      renewDeadline: 20_000,
      retryPeriod: 5_000,
      healthProbeBindAddress: { host: '127.0.0.1', port: 9000 },
      metricsBindAddress: false,
      cacheDumpBindAddress: { host: '127.0.0.1', port: 9100 },
      kubeApiQps: 12.5,
      kubeApiBurst: 80,
      logLevel: 'debug',
      logFormat: 'console',
      workers: 7,
      reconcileTimeout: 0,
      warmStandby: false,
      podName: 'example-7d9f-x2',
      podNamespace: 'ops',
      watchNamespace: ['a', 'b'],
    });
    assert.equal(fromEnv.setBy.standard.kubeconfig, 'KUBECONFIG');
    assert.equal(fromEnv.setBy.standard.context, 'CONTEXT');
    const flagged = parse(
      ['--kubeconfig=/c', '--workers=8', '--watch-namespace=c', '--watch-namespace', 'd'],
      env,
    );
    assert.deepEqual(
      [flagged.standard.kubeconfig, flagged.standard.workers, flagged.standard.watchNamespace],
      ['/c', 8, ['c', 'd']],
    );
    assert.equal(flagged.setBy.standard.kubeconfig, '--kubeconfig');
    assert.equal(flagged.setBy.standard.context, 'CONTEXT');
    for (const variable of Object.keys(env).filter((name) => !(name in REQUIRED)))
      assert.ok(variable === variableOf(`--${variable.toLowerCase().replaceAll('_', '-')}`), variable);
  });

  it('bad values a cluster would only reject later are refused up front, naming what the user set', () => {
    const cases: [string[], Env, RegExp][] = [
      // Event reportingInstance allows 128 bytes; a longer name would crash at the first Event.
      [
        [],
        { POD_NAME: 'p'.repeat(129) },
        /^POD_NAME: expected a DNS-1123 subdomain \(at most 128 characters\), got "p{129}"$/,
      ],
      [['--pod-name', 'Pod_1'], {}, /^--pod-name: expected a DNS-1123 subdomain/],
      // Go has no day unit; a negative timeout means nothing.
      [
        [],
        { RECONCILE_TIMEOUT: '1d' },
        /^RECONCILE_TIMEOUT: expected a duration from 0s to 24h, like 1m30s, got "1d"$/,
      ],
      [['--reconcile-timeout=-1s'], {}, /^--reconcile-timeout: expected a duration from 0s to 24h/],
      // A Lease name: a DNS-1123 subdomain.
      [
        [],
        { LEADER_ELECTION_ID: 'Bad Lease!' },
        /^LEADER_ELECTION_ID: expected a DNS-1123 subdomain .*, got "Bad Lease!"$/,
      ],
      // Blamed on what was set, not on the option it feeds.
      [[], { POD_NAMESPACE: 'Ops' }, /^POD_NAMESPACE: expected a DNS-1123 label/],
      [[], { LEADER_ELECTION_NAMESPACE: 'ops.x' }, /^LEADER_ELECTION_NAMESPACE: expected a DNS-1123 label/],
      [[], { WATCH_NAMESPACE: 'ok,Not_A_Name' }, /^WATCH_NAMESPACE: expected namespace names/],
      [[], { LOG_FORMAT: 'text' }, /^LOG_FORMAT: expected one of json, console, got "text"$/],
      [
        [],
        { LOG_LEVEL: 'loud' },
        /^LOG_LEVEL: expected one of error, warn, info, http, verbose, debug, silly/,
      ],
      [
        [],
        { METRICS_BIND_ADDRESS: '8080' },
        /^METRICS_BIND_ADDRESS: expected \[host\]:port \(like :8080 or 127\.0\.0\.1:8080\), or 0 for none, got "8080"$/,
      ],
      [
        [],
        { KUBE_API_QPS: '0' },
        /^KUBE_API_QPS: expected -1 \(no limit\) or a number above 0 and at most 100000, got "0"$/,
      ],
      [[], { KUBE_API_QPS: '-2' }, /^KUBE_API_QPS: expected -1 \(no limit\) or a number above 0/],
      [[], { WORKERS: 'many' }, /^WORKERS: expected an integer from 1 to 1000, got "many"$/],
      [[], { LEADER_ELECT_RETRY_PERIOD: '2' }, /^LEADER_ELECT_RETRY_PERIOD: expected a duration/],
      [
        [],
        { LEADER_ELECT_LEASE_DURATION: '15500ms' },
        /^LEADER_ELECT_LEASE_DURATION: expected whole seconds \(the Lease stores seconds\), got 15.5s$/,
      ],
      [
        [],
        { LEADER_ELECT_RENEW_DEADLINE: '15s' },
        /^LEADER_ELECT_RENEW_DEADLINE: the renew deadline \(15000 ms\) must be shorter than the lease duration \(15000 ms\)$/,
      ],
      [[], { LEADER_ELECT_LEASE_DURATION: '10s' }, /^LEADER_ELECT_LEASE_DURATION: the renew deadline/],
      [
        ['--leader-elect-retry-period=9s'],
        {},
        /^--leader-elect-retry-period: the renew deadline \(10000 ms\) must exceed 1\.2 retry periods/,
      ],
      [
        [],
        { HEALTH_PROBE_BIND_ADDRESS: '127.0.0.1:8080' },
        /^HEALTH_PROBE_BIND_ADDRESS: the same port as the health probes needs the same host/,
      ],
    ];
    for (const [argv, env, message] of cases)
      assert.match(problem(argv, { ...REQUIRED, ...env }), message, JSON.stringify([argv, env]));
  });

  it('a program that is not namespaced has no --watch-namespace', () => {
    const clusterScoped = defineProgram({ ...program, namespaced: false });
    assert.throws(
      () => parseProgram(clusterScoped, ['--watch-namespace=a'], REQUIRED),
      /--watch-namespace: unknown argument/,
    );
    const parsed = parseProgram(clusterScoped, [], { ...REQUIRED, WATCH_NAMESPACE: 'a' });
    assert.ok(parsed.action === 'run' && parsed.standard.watchNamespace === undefined);
  });
});

describe('parseProgram: sharding', () => {
  const sharded = defineProgram({ ...program, sharding: true });
  function parseSharded(argv: string[], env: Env = {}) {
    const parsed = parseProgram(sharded, argv, { ...REQUIRED, ...env });
    assert.equal(parsed.action, 'run');
    return parsed;
  }
  function shardedProblem(argv: string[], env: Env): string {
    try {
      parseProgram(sharded, argv, { ...REQUIRED, ...env });
    } catch (error) {
      assert.ok(error instanceof ConfigError, String(error));
      return error.message;
    }
    assert.fail(`accepted ${JSON.stringify([argv, env])}`);
  }

  it('defaults: off, leader election on, the ring named after the program', () => {
    const { standard, setBy } = parseSharded([]);
    assert.deepEqual(
      [standard.sharding, standard.shardingRing, standard.leaderElect],
      [false, 'example', true],
    );
    assert.equal(setBy.standard.sharding, undefined);
  });

  it('--sharding / SHARDING, --sharding-ring / SHARDING_RING: the flag wins over its variable', () => {
    const fromEnv = parseSharded([], { SHARDING: 'true', SHARDING_RING: 'Example_ring.v2' });
    assert.deepEqual([fromEnv.standard.sharding, fromEnv.standard.shardingRing], [true, 'Example_ring.v2']);
    assert.deepEqual(
      [fromEnv.setBy.standard.sharding, fromEnv.setBy.standard.shardingRing],
      ['SHARDING', 'SHARDING_RING'],
    );
    const flagged = parseSharded(['--sharding=false', '--sharding-ring', 'other'], {
      SHARDING: 'true',
      SHARDING_RING: 'ring',
    });
    assert.deepEqual([flagged.standard.sharding, flagged.standard.shardingRing], [false, 'other']);
    assert.equal(parseSharded(['--sharding']).standard.sharding, true, 'a bool flag takes no value');
    assert.equal(
      shardedProblem([], { SHARDING_RING: 'a/b' }),
      `SHARDING_RING: expected a label value (at most 63 letters, digits, '-', '_' or '.', alphanumeric at both ends), got "a/b"`,
    );
    assert.match(
      shardedProblem(['--sharding-ring', 'r'.repeat(64)], {}),
      /^--sharding-ring: expected a label value/,
    );
  });

  it('sharded, a defaulted --leader-elect turns off; one set to false stays so', () => {
    const defaulted = parseSharded(['--sharding']);
    assert.deepEqual(
      [defaulted.standard.leaderElect, defaulted.setBy.standard.leaderElect],
      [false, undefined],
    );
    const off = parseSharded([], { SHARDING: 'true', LEADER_ELECT: 'false' });
    assert.equal(off.standard.leaderElect, false);
    const unsharded = parseSharded([], { LEADER_ELECT: 'true' });
    assert.deepEqual([unsharded.standard.sharding, unsharded.standard.leaderElect], [false, true]);
  });

  it('sharded with --leader-elect set to true: one line naming both as set', () => {
    const cases: [string[], Env, string][] = [
      [['--sharding', '--leader-elect'], {}, '--sharding and --leader-elect'],
      [[], { SHARDING: 'true', LEADER_ELECT: 'true' }, 'SHARDING and LEADER_ELECT'],
      [['--leader-elect=true'], { SHARDING: '1' }, 'SHARDING and --leader-elect'],
    ];
    for (const [argv, env, names] of cases) {
      const message = shardedProblem(argv, env);
      assert.equal(
        message,
        `${names}: sharding replaces leader election (every replica is active): leave --leader-elect unset or false`,
      );
      assert.doesNotMatch(message, /\n/);
    }
  });

  it('--warm-standby says it is ignored when sharded', () => {
    assert.match(optionsTable(sharded), /`--warm-standby` .*; ignored with --sharding \(no standbys\)/);
  });

  it('a program without sharding has neither option, nor the note on --warm-standby', () => {
    assert.throws(
      () => parseProgram(program, ['--sharding'], REQUIRED),
      /^ConfigError: --sharding: unknown argument$/,
    );
    const parsed = parse([], { ...REQUIRED, SHARDING: 'true', SHARDING_RING: 'x' });
    assert.ok(!('sharding' in parsed.standard) && !('shardingRing' in parsed.standard));
    assert.equal(parsed.standard.leaderElect, true, 'the variables mean nothing to it');
    assert.doesNotMatch(optionsTable(program), /sharding/i);
  });
});

describe('defineProgram', () => {
  it('refuses a flag or variable declared twice, standard ones included', () => {
    const workers = option(integer(1, 2), { flag: '--workers', description: 'x' });
    assert.throws(
      () => defineProgram({ ...program, options: { ...program.options, workers } }),
      /example: --workers is declared twice/,
    );
    const tokenValue = option(text(), { flag: '--api-token', description: 'x' });
    assert.throws(
      () => defineProgram({ ...program, options: { ...program.options, tokenValue } }),
      /example: API_TOKEN is declared twice/,
    );
  });

  it('refuses a default its kind rejects, when the module loads', () => {
    assert.throws(
      () => option(integer(1, 2), { flag: '--n', description: 'x', default: '3' }),
      /--n: default "3"/,
    );
  });
});

describe('nameAsSet', () => {
  it('names an option as the user set it, else by both names (a secret: by its two variables)', () => {
    assert.equal(nameAsSet(program.options.greeting, '--greeting'), '--greeting');
    assert.equal(nameAsSet(program.options.greeting, 'GREETING'), 'GREETING');
    assert.equal(nameAsSet(program.options.greeting, undefined), '--greeting / GREETING');
    assert.equal(nameAsSet(program.options.token, 'API_TOKEN_FILE'), 'API_TOKEN_FILE');
    assert.equal(nameAsSet(program.options.token, undefined), 'API_TOKEN / API_TOKEN_FILE');
  });
});
