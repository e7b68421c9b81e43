/**
 * The CustomResourceDefinitions the controllers need: the charts' own (the files users install), and
 * Cluster API's Cluster and Machine, which mailgun-cluster watches. A CRD that exists is never replaced
 * (a user's cluster may run another version of a chart); where Cluster API is not installed, minimal
 * stand-ins of its two CRDs take its place, like in the controller's own tests.
 */
import { isAlreadyExists, isNotFound, type KubeClient } from '@loopwright/runtime';
import { CLUSTER_API_VERSION, clusterApiCrdName, clusterApiStandInCrd } from '@loopwright/testing';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { parse } from 'yaml';
import { MANAGED_BY } from './names.ts';
import { repoRoot } from './repo.ts';

const MANAGED_KEY = 'app.kubernetes.io/managed-by';
const CRDS = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';
/** The Cluster API version mailgun-cluster watches Clusters and Machines in. */

interface Crd {
  metadata: { name: string; labels?: Record<string, string> };
  spec: { versions: { name: string; served: boolean }[] };
  status?: { conditions?: { type: string; status: string }[] };
}

function chartCrds(): Crd[] {
  return ['at-scheduler', 'mailgun-cluster'].flatMap((chart) => {
    const dir = join(repoRoot, 'charts', chart, 'crds');
    return readdirSync(dir)
      .filter((file) => file.endsWith('.yaml'))
      .sort()
      .map((file) => parse(readFileSync(join(dir, file), 'utf8')) as Crd);
  });
}

async function createUnlessPresent(client: KubeClient, body: object): Promise<boolean> {
  try {
    await client.requestJson('POST', CRDS, { body });
    return true;
  } catch (error) {
    if (isAlreadyExists(error)) return false;
    throw error;
  }
}

async function waitEstablished(client: KubeClient, name: string, signal: AbortSignal): Promise<void> {
  for (const deadline = Date.now() + 30_000; Date.now() < deadline;) {
    const crd = await client.requestJson<Crd>('GET', `${CRDS}/${name}`);
    if (crd.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True')) return;
    await sleep(200, undefined, { signal });
  }
  throw new Error(`CRD ${name} not established after 30s`);
}

/** What {@link ensureCrds} found and did, for the lines the demo prints. */
export interface CrdReport {
  installed: string[];
  present: string[];
  /** The Cluster API stand-ins, installed by this run or an earlier one. */
  standIns: string[];
}

export async function ensureCrds(client: KubeClient, signal: AbortSignal): Promise<CrdReport> {
  const report: CrdReport = { installed: [], present: [], standIns: [] };
  for (const crd of chartCrds()) {
    const created = await createUnlessPresent(client, crd);
    (created ? report.installed : report.present).push(crd.metadata.name);
  }
  for (const kind of ['Cluster', 'Machine'] as const) {
    const name = clusterApiCrdName(kind);
    let existing: Crd | undefined;
    try {
      existing = await client.requestJson<Crd>('GET', `${CRDS}/${name}`);
    } catch (error) {
      if (!isNotFound(error)) throw error;
    }
    if (existing && !existing.spec.versions.some((v) => v.name === CLUSTER_API_VERSION && v.served))
      throw new Error(
        `${name} does not serve ${CLUSTER_API_VERSION}: mailgun-cluster needs Cluster API v1.11 or newer`,
      );
    if (existing) {
      report.present.push(name);
      if (existing.metadata.labels?.[MANAGED_KEY] === MANAGED_BY[MANAGED_KEY]) report.standIns.push(name);
    } else if (await createUnlessPresent(client, clusterApiStandInCrd(kind, MANAGED_BY))) {
      report.installed.push(name);
      report.standIns.push(name);
    } else report.present.push(name);
  }
  for (const name of [...report.installed, ...report.present]) await waitEstablished(client, name, signal);
  return report;
}
