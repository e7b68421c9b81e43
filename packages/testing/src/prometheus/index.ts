export {
  ensurePrometheusBinary,
  pinnedPrometheusVersion,
  prometheusModuleDir,
  type PinnedPrometheusVersion,
} from './binary.ts';
