/**
 * The charts' CustomResourceDefinitions (the files users install). A CRD that exists is never replaced
 * (a user's cluster may run another version of a chart). Cluster API's come with Cluster API
 * (cluster-api.ts).
 */
import { isAlreadyExists, type KubeClient } from '@loopwright/runtime';
import { readCrdFiles } from '@loopwright/envtest';
import { setTimeout as sleep } from 'node:timers/promises';
import { CUSTOM_RESOURCE_DEFINITIONS } from './resources.ts';
import { CONTROLLERS } from './workspace.ts';

interface Crd {
  metadata: { name: string };
  status?: { conditions?: { type: string; status: string }[] };
}

function chartCrds(): Crd[] {
  return CONTROLLERS.flatMap(({ crdFiles }) => readCrdFiles<Crd>(crdFiles));
}

async function createUnlessPresent(client: KubeClient, crd: Crd): Promise<boolean> {
  try {
    await client.resource<Crd>(CUSTOM_RESOURCE_DEFINITIONS).create(crd);
    return true;
  } catch (error) {
    if (isAlreadyExists(error)) return false;
    throw error;
  }
}

async function waitEstablished(client: KubeClient, name: string, signal: AbortSignal): Promise<void> {
  for (const deadline = Date.now() + 30_000; Date.now() < deadline;) {
    const crd = await client.resource<Crd>(CUSTOM_RESOURCE_DEFINITIONS).get({ name });
    if (crd.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True')) return;
    await sleep(200, undefined, { signal });
  }
  throw new Error(`CRD ${name} not established after 30s`);
}

/** What {@link ensureCrds} found and did, for the lines the demo prints. */
export interface CrdReport {
  installed: string[];
  present: string[];
}

export async function ensureCrds(client: KubeClient, signal: AbortSignal): Promise<CrdReport> {
  const report: CrdReport = { installed: [], present: [] };
  for (const crd of chartCrds()) {
    const created = await createUnlessPresent(client, crd);
    (created ? report.installed : report.present).push(crd.metadata.name);
  }
  for (const name of [...report.installed, ...report.present]) await waitEstablished(client, name, signal);
  return report;
}
