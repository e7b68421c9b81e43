export { ensurePrometheusBinary, pinnedPrometheusVersion, type PinnedPrometheusVersion } from './binary.ts';
