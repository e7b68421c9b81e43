import { fileURLToPath } from 'node:url';

/** The repository root: the controllers' sources and the charts' CRDs are found from here. */
export const repoRoot = fileURLToPath(new URL('../../', import.meta.url));
