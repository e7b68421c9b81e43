export { ensureHelmBinary, pinnedHelmVersion } from './binary.ts';
export { helm, HelmError, type HelmOptions, type HelmResult } from './run.ts';
