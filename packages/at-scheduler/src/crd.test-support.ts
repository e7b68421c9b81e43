/**
 * Integration-test support: installs the At CRD the way every test of this package does, under one
 * field manager, so a test that applies a variant of the CRD takes over the fields an earlier test set.
 */
import type { KubeConfig } from '@kubernetes/client-node';
import { applyCrds } from '@loopwright/envtest';
import { loadAtCrd, type AtCrd } from './crd.ts';

/** Server-side applies `crd` (default: the chart's At CRD) and waits until it is served. */
export async function installAtCrd(kc: KubeConfig, crd: AtCrd = loadAtCrd()): Promise<void> {
  await applyCrds(kc, [crd], { fieldManager: 'at-scheduler-tests' });
}
