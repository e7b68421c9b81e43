/**
 * What clusterctl reads from an infrastructure provider's release: `metadata.yaml`, mapping each release
 * series (major.minor) to the Cluster API contract it implements, and `infrastructure-components.yaml`,
 * the provider's objects with `${VARIABLE}`s clusterctl substitutes from the user's environment.
 * clusterctl's local repository layout is `<root>/infrastructure-<name>/<vX.Y.Z>/<file>`.
 */
import { stringify } from 'yaml';
import type { ReleaseVersion } from './version.ts';

/** The Cluster API contract mailgun-cluster implements (its CRDs' `cluster.x-k8s.io/v1beta2` label). */
export const CLUSTER_API_CONTRACT = 'v1beta2';

/** The provider's name for clusterctl: `--infrastructure mailgun`. */
export const CLUSTERCTL_PROVIDER_NAME = 'mailgun';
export const CLUSTERCTL_PROVIDER_LABEL = `infrastructure-${CLUSTERCTL_PROVIDER_NAME}`;

/**
 * metadata.yaml for a release: clusterctl refuses a version whose series (major.minor) the file does not
 * list. Each release's file lists its own series; the provider has implemented v1beta2 since its first.
 */
export function clusterctlMetadata(release: ReleaseVersion): string {
  const series = [{ major: release.major, minor: release.minor, contract: CLUSTER_API_CONTRACT }];
  return stringify({
    apiVersion: 'clusterctl.cluster.x-k8s.io/v1alpha3',
    kind: 'Metadata',
    releaseSeries: series,
  });
}
