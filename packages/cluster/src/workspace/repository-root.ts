import { fileURLToPath } from 'node:url';

/** The repository's root directory (with a trailing slash), from this module's place in it. */
export const repositoryRoot = fileURLToPath(new URL('../../../../', import.meta.url));
