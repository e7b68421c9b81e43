import assert from 'node:assert/strict';
import { chmod, mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { DockerfileError, parseDockerfile } from './dockerfile.ts';
import { readFile } from 'node:fs/promises';
import { standInName } from './base-images.ts';
import { bundleCommandOf, dockerfilePath } from './controller-image.ts';
import { distrolessNodejsImage } from './distroless-nodejs.ts';
import { executeLastStage, stageVariables, type ExecuteOptions } from './dockerfile-execute.ts';
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

  it('scopes a global ARG CONTROLLER as BuildKit does: seen by a stage that redeclares it, with the build arg', async () => {
    const text = [
      'ARG CONTROLLER', // 1
      'FROM example.test/builder AS build', // 2
      'RUN echo $CONTROLLER', // 3: not redeclared yet, unset
      'ARG CONTROLLER', // 4
      'RUN ./scripts/bundle.sh ${CONTROLLER} /bundle', // 5
      'FROM example.test/base:1', // 6
      'ARG CONTROLLER', // 7
      'LABEL title="${CONTROLLER}" unscoped="${OTHER}"', // 8
    ].join('\n');
    const parsed = parseDockerfile(text);
    const [build] = parsed.stages;
    assert.ok(build);
    const [unscoped, , run] = build.instructions;
    assert.ok(unscoped && run);
    assert.equal(
      stageVariables(parsed, build, unscoped, { CONTROLLER: 'at-scheduler' }).get('CONTROLLER'),
      undefined,
    );
    assert.equal(
      stageVariables(parsed, build, run, { CONTROLLER: 'at-scheduler' }).get('CONTROLLER'),
      'at-scheduler',
    );
    assert.equal(stageVariables(parsed, build, run).get('CONTROLLER'), undefined);

    const { image } = await executeLastStage(parsed, options({ buildArgs: { CONTROLLER: 'cloud-node' } }));
    assert.deepEqual(image.config.Labels, { title: 'cloud-node', unscoped: '' });
  });

  it('a redeclared ARG takes its own default, else the global one, and ENV overrides ARG', () => {
    const parsed = parseDockerfile(
      'ARG A=global B=globalb\nFROM example.test/builder AS build\nARG A=local\nARG B\nENV B=env\nRUN x\n',
    );
    const [build] = parsed.stages;
    const run = build?.instructions.at(-1);
    assert.ok(build && run);
    const vars = stageVariables(parsed, build, run);
    assert.equal(vars.get('A'), 'local');
    assert.equal(vars.get('B'), 'env');
    assert.equal(stageVariables(parsed, build, run, { A: 'arg' }).get('A'), 'arg');
  });

  describe('bundleCommandOf: the build stage must bundle the controller the build arg names', () => {
    const copyOf = (parsed: ReturnType<typeof parseDockerfile>) => {
      const copy = parsed.stages.at(-1)?.instructions.find(({ keyword }) => keyword === 'COPY');
      assert.ok(copy);
      return copy;
    };
    /** bundleCommandOf for a build of `controller` with `--build-arg CONTROLLER=<built>`, into /bundle. */
    const checkBundle = (
      parsed: ReturnType<typeof parseDockerfile>,
      build: NonNullable<ReturnType<typeof parseDockerfile>['stages'][number]>,
      built: string,
      controller = 'at-scheduler',
      output = '/bundle',
    ) => {
      bundleCommandOf(parsed, build, { CONTROLLER: built }, controller, output, copyOf(parsed));
    };
    for (const word of ['${CONTROLLER}', '$CONTROLLER', '"${CONTROLLER}"']) {
      it(`expands ./scripts/bundle.sh ${word} /bundle with --build-arg CONTROLLER`, () => {
        const parsed = parseDockerfile(
          `ARG CONTROLLER\nFROM b AS build\nARG CONTROLLER\nRUN test -n "$CONTROLLER" && ./scripts/bundle.sh ${word} /bundle\nFROM example.test/base:1\nCOPY --from=build /bundle /app\n`,
        );
        const [build] = parsed.stages;
        assert.ok(build);
        checkBundle(parsed, build, 'at-scheduler');
        assert.throws(() => {
          checkBundle(parsed, build, 'cloud-node');
        }, /line 4: expected \.\/scripts\/bundle\.sh at-scheduler \/bundle, found \.\/scripts\/bundle\.sh cloud-node \/bundle/);
        assert.throws(() => {
          checkBundle(parsed, build, 'at-scheduler', 'at-scheduler', '/other');
        }, /expected \.\/scripts\/bundle\.sh at-scheduler \/other/);
      });
    }

    it('throws when the stage does not redeclare the global ARG (BuildKit would run bundle.sh without it)', () => {
      const parsed = parseDockerfile(
        'ARG CONTROLLER\nFROM b AS build\nRUN ./scripts/bundle.sh ${CONTROLLER} /bundle\nFROM example.test/base:1\nCOPY --from=build /bundle /app\n',
      );
      const [build] = parsed.stages;
      assert.ok(build);
      assert.throws(() => {
        checkBundle(parsed, build, 'at-scheduler');
      }, /found \.\/scripts\/bundle\.sh {2}\/bundle/);
    });

    it("accepts the repository's Dockerfile for a controller only with its CONTROLLER", async () => {
      const parsed = parseDockerfile(await readFile(dockerfilePath(), 'utf8'));
      const build = parsed.stages.find(({ name }) => name === 'build');
      assert.ok(build);
      for (const controller of ['at-scheduler', 'cloud-node', 'mailgun-cluster']) {
        checkBundle(parsed, build, controller, controller);
      }
      assert.throws(() => {
        checkBundle(parsed, build, 'cloud-node');
      }, /expected \.\/scripts\/bundle\.sh at-scheduler \/bundle/);
    });
  });
});

describe('standInName: base images pinned by digest', () => {
  const digest = `sha256:${'0123456789abcdef'.repeat(4)}`;

  it('matches name:tag@sha256:<digest> by its name:tag, normalized', () => {
    assert.equal(
      standInName(`gcr.io/distroless/nodejs24-debian12:nonroot@${digest}`),
      'gcr.io/distroless/nodejs24-debian12:nonroot',
    );
    assert.equal(standInName(`busybox:1.37.0@${digest}`), 'docker.io/library/busybox:1.37.0');
    assert.equal(standInName('localhost:5000/app:1'), 'localhost:5000/app:1');
    assert.equal(standInName('busybox'), 'docker.io/library/busybox:latest');
  });

  it('throws on a digest alone or a malformed digest, naming the line', () => {
    assert.throws(
      () => standInName(`gcr.io/distroless/nodejs24-debian12@${digest}`, 7),
      /line 7: .*pinned by digest alone/,
    );
    assert.throws(() => standInName(`localhost:5000/app@${digest}`, 7), /line 7: .*pinned by digest alone/);
    assert.throws(() => standInName('busybox:1.37.0@sha256:abc', 3), /line 3: .*not a sha256 digest/);
  });

  it("the repository's Dockerfile pins its runtime base by digest, and it maps to the distroless stand-in", async () => {
    const parsed = parseDockerfile(await readFile(dockerfilePath(), 'utf8'));
    const runtime = parsed.stages.at(-1);
    assert.ok(runtime);
    assert.match(runtime.baseImage, /:nonroot@sha256:[0-9a-f]{64}$/);
    assert.equal(standInName(runtime.baseImage, runtime.from.line), distrolessNodejsImage);
    for (const stage of parsed.stages)
      assert.match(stage.baseImage, /^[^@\s]+:[^@:/\s]+@sha256:[0-9a-f]{64}$/);
  });
});
