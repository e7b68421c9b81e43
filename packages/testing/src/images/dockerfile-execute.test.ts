import assert from 'node:assert/strict';
import { chmod, mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { DockerfileError, parseDockerfile } from './dockerfile.ts';
import { executeLastStage, type ExecuteOptions } from './dockerfile-execute.ts';
import { writeLayer } from './layer.ts';
import type { Image } from './oci-image.ts';

describe('executeLastStage', () => {
  let dir: string;
  let base: Image;
  let stageOutput: string;
  const requested: string[] = [];

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'loopwright-execute-test-'));
    base = {
      name: 'example.test/base:1',
      config: { User: '1000', Env: ['PATH=/bin', 'KEEP=base'], Cmd: ['base-cmd'], WorkingDir: '/' },
      layers: [
        await writeLayer(
          [{ type: 'directory', path: 'srv', mode: 0o755, uid: 0, gid: 0 }],
          join(dir, 'blobs'),
        ),
      ],
      history: [{ created: '1970-01-01T00:00:00Z', created_by: 'base' }],
    };
    stageOutput = join(dir, 'out');
    await mkdir(join(stageOutput, 'bin'), { recursive: true });
    await writeFile(join(stageOutput, 'bin', 'run'), '#!/bin/sh\n');
    await chmod(join(stageOutput, 'bin', 'run'), 0o750);
    await symlink('bin/run', join(stageOutput, 'run'));
    await chmod(stageOutput, 0o751);
  });
  after(() => rm(dir, { recursive: true, force: true }));

  function options(overrides: Partial<ExecuteOptions> = {}): ExecuteOptions {
    return {
      name: 'example.test/app:1.0',
      blobsDir: join(dir, 'blobs'),
      buildArgs: { VERSION: '1.0' },
      baseImage: (reference, line) => {
        if (reference !== base.name) throw new DockerfileError(line, `unknown base ${reference}`);
        return Promise.resolve(base);
      },
      stageOutput: (stage, sourcePath) => {
        requested.push(`${stage.name ?? ''}:${sourcePath}`);
        return Promise.resolve(stageOutput);
      },
      ...overrides,
    };
  }

  const dockerfile = `ARG GLOBAL=g
FROM example.test/builder AS build
RUN make /out

FROM example.test/base:1
ARG VERSION=dev
ARG GLOBAL
ENV KEEP=override NEW="a b" \\
    FROM_ARG=\${VERSION}
LABEL version="\${VERSION}" global=$GLOBAL
WORKDIR /work/dir
COPY --from=build /out /srv/app
USER 0:0
EXPOSE 8080 9090/udp
ENTRYPOINT ["/bin/run"]
`;

  it('merges the stage into the base config as Docker does', async () => {
    const { image } = await executeLastStage(parseDockerfile(dockerfile), options());
    assert.deepEqual(image.config, {
      // ENTRYPOINT without a CMD of the stage drops the base's CMD.
      User: '0:0',
      Env: ['PATH=/bin', 'KEEP=override', 'NEW=a b', 'FROM_ARG=1.0'],
      WorkingDir: '/work/dir',
      Labels: { version: '1.0', global: 'g' },
      ExposedPorts: { '8080/tcp': {}, '9090/udp': {} },
      Entrypoint: ['/bin/run'],
    });
    assert.equal(image.name, 'example.test/app:1.0');
    assert.deepEqual(
      image.history.map(({ created_by, empty_layer }) => [created_by.split(' ')[0], empty_layer ?? false]),
      [
        ['base', false],
        ['ARG', true],
        ['ARG', true],
        ['ENV', true],
        ['LABEL', true],
        ['WORKDIR', false],
        ['COPY', false],
        ['USER', true],
        ['EXPOSE', true],
        ['ENTRYPOINT', true],
      ],
    );
    assert.deepEqual(requested, ['build:/out']);
  });

  it('creates the WORKDIR as the current USER, and copies files as root with their modes', async () => {
    const { image, addedLayers } = await executeLastStage(parseDockerfile(dockerfile), options());
    assert.equal(image.layers.length, 3);
    const [workdir, copy] = addedLayers;
    assert.deepEqual(workdir?.entries, [
      { type: 'directory', path: 'work', mode: 0o755, uid: 1000, gid: 1000 },
      { type: 'directory', path: 'work/dir', mode: 0o755, uid: 1000, gid: 1000 },
    ]);
    const summary = copy?.entries.map((entry) => [
      entry.path,
      entry.type,
      entry.type === 'symlink' ? entry.target : entry.mode.toString(8),
      `${entry.uid}:${entry.gid}`,
    ]);
    assert.deepEqual(summary, [
      ['srv/app', 'directory', '751', '0:0'],
      ['srv/app/bin', 'directory', '755', '0:0'],
      ['srv/app/bin/run', 'file', '750', '0:0'],
      ['srv/app/run', 'symlink', 'bin/run', '0:0'],
    ]);
  });

  it('keeps a CMD the stage sets before or after ENTRYPOINT', async () => {
    const { image } = await executeLastStage(
      parseDockerfile('FROM example.test/base:1\nCMD ["--serve"]\nENTRYPOINT /bin/run now\n'),
      options({ buildArgs: {} }),
    );
    assert.deepEqual(image.config.Cmd, ['--serve']);
    assert.deepEqual(image.config.Entrypoint, ['/bin/sh', '-c', '/bin/run now']);
  });

  it('throws on an instruction it does not implement, naming the instruction and its line', async () => {
    for (const [text, pattern] of [
      ['FROM example.test/base:1\nENV A=1\nRUN echo no\n', /line 3: RUN is not supported/],
      ['FROM example.test/base:1\nHEALTHCHECK NONE\n', /line 2: HEALTHCHECK is not supported/],
      ['FROM example.test/base:1\nCOPY . /app\n', /line 2: only COPY --from=<an earlier stage>/],
      [
        'FROM example.test/builder AS b\nFROM example.test/base:1\nCOPY --from=b --chown=1:1 /x /y\n',
        /line 3: COPY --chown is not supported/,
      ],
      ['FROM example.test/other:2\n', /line 1: unknown base example.test\/other:2/],
    ] as const) {
      await assert.rejects(
        executeLastStage(parseDockerfile(text), options({ buildArgs: {} })),
        pattern,
        text,
      );
    }
  });

  it('throws on a build arg no ARG declares', async () => {
    await assert.rejects(
      executeLastStage(
        parseDockerfile('FROM example.test/base:1\n'),
        options({ buildArgs: { VERSOIN: '1' } }),
      ),
      /build args VERSOIN are not declared/,
    );
  });
});
