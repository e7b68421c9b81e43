/**
 * What each image ships, proven without a Docker engine: `scripts/bundle.sh` (the Dockerfile's build
 * stage) builds the controller's bundle into a temporary directory outside the repository; it holds
 * production dependencies only, no symlink out of itself and no native addon; and `node dist/main.js`
 * (the image's entrypoint, run with this Node, the real Node 24 of the workspace, and nothing of the
 * workspace around it) answers --version and --help, then starts against the test control plane with
 * leader election on (as the charts run it), serves /healthz and /readyz, and exits 0 on SIGTERM.
 */
import {
  clusterApiStandInCrd,
  createTestNamespace,
  eventually,
  loadTestKubeConfig,
  startFakeHcloud,
  freeLoopbackPort,
} from '@loopwright/testing';
import type { KubeConfig } from '@kubernetes/client-node';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { parse } from 'yaml';
import {
  buildBundle,
  devOnlyPackages,
  exists,
  installedPackages,
  nativeAddons,
  nonPortableSymlinks,
  readPackageJson,
  runBundle,
  startBundle,
  topLevelPackages,
  type BundleProcess,
  type Controller,
  type PackageJson,
} from './bundle.ts';
import { chartsDir, repoRoot } from './charts.ts';
import { adminKubeconfigPath, api, ApiError } from './kube.ts';

interface Crd {
  metadata: { name: string };
  [key: string]: unknown;
}

async function chartCrds(controller: Controller): Promise<Crd[]> {
  const dir = join(chartsDir, controller, 'crds');
  const files = (await readdir(dir)).filter((file) => file.endsWith('.yaml'));
  return Promise.all(files.map(async (file) => parse(await readFile(join(dir, file), 'utf8')) as Crd));
}

async function installCrds(admin: KubeConfig, crds: Crd[]): Promise<void> {
  const path = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';
  for (const crd of crds) {
    await api(admin, 'POST', path, crd).catch((error: unknown) => {
      if (!(error instanceof ApiError && error.status === 409)) throw error;
    });
  }
  for (const crd of crds) {
    await eventually(
      async () => {
        const current = await api<{ status?: { conditions?: { type: string; status: string }[] } }>(
          admin,
          'GET',
          `${path}/${crd.metadata.name}`,
        );
        assert.ok(current.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True'));
      },
      { timeoutMs: 20_000 },
    );
  }
}

async function httpStatus(port: number, path: string): Promise<number> {
  const response = await fetch(`http://127.0.0.1:${port}${path}`);
  await response.body?.cancel();
  return response.status;
}

/** The Node the bundles run with: the workspace's (Node 24 on Linux x64), the test's own binary. */
const nodeVersion = process.version;

interface Prepared {
  /** The env beyond KUBECONFIG, the probe address and the pod's name and namespace (where the Lease goes). */
  env: Record<string, string>;
  close?: () => Promise<unknown>;
}

/**
 * One controller's bundle, built, inspected and run. `prepare` sets up what the controller needs to
 * become ready; its env must confine the controller to `namespace`: the API server is shared with the
 * other suites, and the process runs as admin.
 */
function describeBundle(
  controller: Controller,
  prepare: (admin: KubeConfig, namespace: string) => Promise<Prepared>,
): void {
  describe(`${controller}: the image's bundle, run with Node ${nodeVersion}`, () => {
    const cleanups: (() => Promise<unknown>)[] = [];
    let bundleDir: string;
    let source: PackageJson;
    /** What the controller calls itself: the package name without its scope. */
    let shortName: string;
    let admin: KubeConfig;
    let namespace: string;

    before(async () => {
      source = await readPackageJson(join(repoRoot, 'packages', controller));
      shortName = source.name.replace(/^@[^/]+\//, '');
      const workDir = await mkdtemp(join(tmpdir(), `loopwright-bundle-${controller}-`));
      cleanups.push(() => rm(workDir, { recursive: true, force: true }));
      bundleDir = join(workDir, 'app');
      await buildBundle(controller, bundleDir);
      admin = loadTestKubeConfig();
      const ns = await createTestNamespace(admin, `bundle-${controller}`);
      cleanups.push(() => ns.cleanup());
      namespace = ns.name;
    });
    after(async () => {
      for (const cleanup of cleanups.reverse()) await cleanup().catch(() => undefined);
    });

    test('holds the built controller and its production dependencies, nothing else', async () => {
      assert.ok(await exists(join(bundleDir, 'dist/main.js')), 'dist/main.js');
      assert.ok(!(await exists(join(bundleDir, 'src'))), 'no src/');
      assert.equal((await readPackageJson(bundleDir)).version, source.version);
      assert.deepEqual(await topLevelPackages(bundleDir), Object.keys(source.dependencies ?? {}).sort());
      const installed = await installedPackages(bundleDir);
      assert.deepEqual(devOnlyPackages(installed), []);
      // The workspace packages arrive built (package.json "files": dist/), never as TypeScript sources.
      const workspace = installed.filter((name) => name.startsWith('@loopwright/'));
      assert.ok(workspace.includes('@loopwright/runtime'), workspace.join(', '));
      for (const name of workspace) {
        const [entry] = (await readdir(join(bundleDir, 'node_modules/.pnpm'))).filter((dir) =>
          dir.startsWith(`${name.replace('/', '+')}@`),
        );
        const dir = join(bundleDir, 'node_modules/.pnpm', entry ?? '?', 'node_modules', name);
        assert.ok(await exists(join(dir, 'dist/index.js')), `${name}: dist/index.js`);
        assert.ok(!(await exists(join(dir, 'src'))), `${name}: no src/`);
      }
      // The Dockerfile copies the bundle to /app: every link must survive the move.
      assert.deepEqual(await nonPortableSymlinks(bundleDir), []);
      // ...and ships the same bundle in the amd64 and the arm64 image.
      assert.deepEqual(await nativeAddons(bundleDir), []);
    });

    test('--version prints the name and the package version, exit 0', async () => {
      assert.deepEqual(await runBundle(bundleDir, ['--version']), {
        code: 0,
        stdout: `${shortName} ${source.version}\n`,
        stderr: '',
      });
    });

    test('--help prints the usage and the flags with their variables, exit 0, without a cluster', async () => {
      const { code, stdout, stderr } = await runBundle(bundleDir, ['--help']);
      assert.equal(code, 0, stderr);
      assert.equal(stderr, '');
      assert.ok(stdout.startsWith(`${shortName} ${source.version}: ${source.description}\n`), stdout);
      assert.match(stdout, /^ {2}--health-probe-bind-address \S+ {2}\(HEALTH_PROBE_BIND_ADDRESS\)$/m);
    });

    test('starts against the API server, answers /healthz and /readyz, exits 0 on SIGTERM', async (t) => {
      const { env, close } = await prepare(admin, namespace);
      if (close) cleanups.push(close);
      const healthPort = await freeLoopbackPort();
      const bundle: BundleProcess = startBundle(bundleDir, {
        ...env,
        KUBECONFIG: adminKubeconfigPath(),
        HEALTH_PROBE_BIND_ADDRESS: `127.0.0.1:${healthPort}`,
        METRICS_BIND_ADDRESS: '0',
        POD_NAME: `${controller}-bundle-test`,
        POD_NAMESPACE: namespace,
        LOG_FORMAT: 'json',
      });
      t.after(() => bundle.stop());
      const running = () => {
        const { exitCode, signalCode } = bundle.child;
        if (exitCode !== null || signalCode !== null)
          assert.fail(`exited (${exitCode ?? signalCode}):\n${bundle.output()}`);
      };
      await eventually(
        async () => {
          running();
          assert.equal(await httpStatus(healthPort, '/healthz'), 200);
        },
        { timeoutMs: 30_000, intervalMs: 200 },
      );
      // Ready: the informers listed and watched through the bundle's own Kubernetes client.
      await eventually(
        async () => {
          running();
          assert.equal(await httpStatus(healthPort, '/readyz'), 200);
        },
        { timeoutMs: 30_000, intervalMs: 200 },
      );
      assert.equal(await bundle.stop(), 0, bundle.output());
    });
  });
}

describeBundle('at-scheduler', async (admin, namespace) => {
  await installCrds(admin, await chartCrds('at-scheduler'));
  return { env: { WATCH_NAMESPACE: namespace } };
});

describeBundle('mailgun-cluster', async (admin, namespace) => {
  await installCrds(admin, [
    ...(await chartCrds('mailgun-cluster')),
    clusterApiStandInCrd('Cluster'),
    clusterApiStandInCrd('Machine'),
  ]);
  return {
    env: {
      WATCH_NAMESPACE: namespace,
      MAILGUN_DOMAIN: 'mg.example.com',
      MAILGUN_API_KEY: `key-${randomBytes(16).toString('hex')}`,
      MAIL_RECIPIENT: 'clusters@example.com',
      // Nothing is sent: the namespace holds no MailgunCluster. A closed port, should that change.
      MAILGUN_URL: `http://127.0.0.1:${await freeLoopbackPort()}`,
    },
  };
});

describeBundle('cloud-node', async () => {
  // The start-up token check needs an answer: the fake Hetzner Cloud API, with a fresh token.
  const token = randomBytes(32).toString('hex');
  const fake = await startFakeHcloud({ token });
  return {
    env: {
      HCLOUD_TOKEN: token,
      HCLOUD_ENDPOINT: fake.url,
      // cloud-node deletes Nodes whose servers are gone, and the fake has no server: a selector that no
      // Node of the other suites matches.
      NODE_SELECTOR: `loopwright.dev/bundle-test=${randomBytes(3).toString('hex')}`,
    },
    close: () => fake.close(),
  };
});
