/**
 * The e2e run's global setup: the shared control plane of @loopwright/testing, plus the pinned helm
 * built once before any test file starts (files run in parallel processes; without this each would
 * start its own cold `go build` of helm on a fresh machine).
 */
import { ensureHelmBinary } from '@loopwright/testing';
import { globalSetup as controlPlaneSetup, globalTeardown } from '../packages/testing/src/global-setup.ts';

export async function globalSetup(): Promise<void> {
  await ensureHelmBinary({ log: (line) => process.stderr.write(`[helm] ${line}\n`) });
  await controlPlaneSetup();
}

export { globalTeardown };
