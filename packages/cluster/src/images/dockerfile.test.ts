import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DockerfileError, parseDockerfile } from './dockerfile.ts';
import { argDeclarations, expandWord, keyValues, words } from './dockerfile-words.ts';

describe('parseDockerfile', () => {
  const text = [
    '# syntax=docker/dockerfile:1', // 1
    '# A comment.', // 2
    'ARG BASE=debian', // 3
    'FROM --platform=$BUILDPLATFORM ${BASE}:12 AS Build', // 4
    'RUN --mount=type=cache,target=/c --mount=type=tmpfs,target=/t \\', // 5
    '    first \\', // 6
    '    # a comment line inside the continuation', // 7
    '', // 8
    '    && second', // 9
    '', // 10
    'from scratch', // 11
    'COPY --from=build /out /app', // 12
    'ENTRYPOINT ["/bin/tool", "--flag"]', // 13
    'CMD echo "shell form"', // 14
    'CMD [not json', // 15
    'expose 8080', // 16
  ].join('\n');
  const dockerfile = parseDockerfile(text);

  it('keeps ARGs before the first FROM as global', () => {
    assert.deepEqual(
      dockerfile.globalArgs.map(({ keyword, arguments: args, line }) => ({ keyword, args, line })),
      [{ keyword: 'ARG', args: 'BASE=debian', line: 3 }],
    );
  });

  it('splits stages at FROM, with their base, flags and lower-cased AS name', () => {
    assert.equal(dockerfile.stages.length, 2);
    const [build, runtime] = dockerfile.stages;
    assert.ok(build && runtime);
    assert.equal(build.name, 'build');
    assert.equal(build.baseImage, '${BASE}:12');
    assert.deepEqual(build.from.flags, [{ name: 'platform', value: '$BUILDPLATFORM' }]);
    assert.equal(runtime.name, undefined);
    assert.equal(runtime.baseImage, 'scratch');
    assert.equal(runtime.from.line, 11);
  });

  it('joins continuation lines, skipping comment and empty lines inside them, and parses repeated flags', () => {
    const [run] = dockerfile.stages[0]?.instructions ?? [];
    assert.ok(run);
    assert.equal(run.keyword, 'RUN');
    assert.equal(run.line, 5);
    assert.deepEqual(run.flags, [
      { name: 'mount', value: 'type=cache,target=/c' },
      { name: 'mount', value: 'type=tmpfs,target=/t' },
    ]);
    assert.equal(run.arguments, 'first     && second');
    assert.equal(run.json, undefined);
  });

  it('reads the JSON form as strings and anything else as the shell form', () => {
    const [copy, entrypoint, cmd, notJson, expose] = dockerfile.stages[1]?.instructions ?? [];
    assert.ok(copy && entrypoint && cmd && notJson && expose);
    assert.deepEqual(copy.flags, [{ name: 'from', value: 'build' }]);
    assert.equal(copy.arguments, '/out /app');
    assert.deepEqual(entrypoint.json, ['/bin/tool', '--flag']);
    assert.equal(cmd.json, undefined);
    assert.equal(cmd.arguments, 'echo "shell form"');
    assert.equal(notJson.json, undefined);
    assert.equal(notJson.arguments, '[not json');
    assert.equal(expose.keyword, 'EXPOSE', 'keywords are case-insensitive');
    assert.equal(expose.line, 16);
  });

  it('throws on an unknown instruction, naming its line', () => {
    assert.throws(
      () => parseDockerfile('FROM scratch\n\nFETCH https://example.com /x\n'),
      (error: unknown) =>
        error instanceof DockerfileError &&
        error.line === 3 &&
        /line 3: unknown instruction FETCH/.test(error.message),
    );
  });

  it('throws on an instruction before the first FROM other than ARG, and on a file without FROM', () => {
    assert.throws(() => parseDockerfile('ENV A=1\nFROM scratch\n'), /line 1: ENV before the first FROM/);
    assert.throws(() => parseDockerfile('# only a comment\n'), /no FROM instruction/);
  });

  it('refuses an escape directive other than the backslash', () => {
    assert.throws(
      () => parseDockerfile('# escape=`\nFROM scratch\n'),
      /line 1: escape character ` is not supported/,
    );
  });
});

describe('Dockerfile words', () => {
  const variables = new Map([
    ['VERSION', '1.2.3'],
    ['EMPTY', ''],
  ]);

  it('expands $VAR, ${VAR}, ${VAR:-default} and ${VAR:+alternative}; unset is empty', () => {
    assert.deepEqual(
      words('$VERSION ${VERSION}x ${UNSET:-d} ${EMPTY:-e} ${VERSION:+set} ${UNSET:+set}- $UNSET', variables),
      ['1.2.3', '1.2.3x', 'd', 'e', 'set', '-'],
    );
  });

  it('groups quoted words, expands inside double quotes only, and honours backslash escapes', () => {
    assert.deepEqual(words(`"a b" 'c $VERSION' "d \\"$VERSION\\"" e\\ f \\$VERSION`, variables), [
      'a b',
      'c $VERSION',
      'd "1.2.3"',
      'e f',
      '$VERSION',
    ]);
  });

  it('reads ENV pairs in both forms and LABEL pairs', () => {
    assert.deepEqual(keyValues('A=1 B="two words" C=${VERSION}', variables, true), [
      { key: 'A', value: '1' },
      { key: 'B', value: 'two words' },
      { key: 'C', value: '1.2.3' },
    ]);
    assert.deepEqual(keyValues('LEGACY value with  spaces', variables, true), [
      { key: 'LEGACY', value: 'value with  spaces' },
    ]);
    assert.deepEqual(keyValues('org.example.version="${VERSION}"   other=x', variables, false).at(0), {
      key: 'org.example.version',
      value: '1.2.3',
    });
    assert.throws(() => keyValues('novalue', variables, false), /"novalue" is not key=value/);
  });

  it('reads ARG declarations with and without defaults', () => {
    assert.deepEqual(argDeclarations('VERSION=dev SOURCE', variables), [
      { name: 'VERSION', defaultValue: 'dev' },
      { name: 'SOURCE' },
    ]);
  });

  it('expands a single word without splitting it', () => {
    assert.equal(expandWord('/srv/$VERSION/a b', variables), '/srv/1.2.3/a b');
  });
});
