import { isNotFound, type KubeClient } from '@loopwright/runtime';

/** GET one object; `undefined` when it does not exist (any other error is thrown). */
export async function getIfExists<T>(client: KubeClient, path: string): Promise<T | undefined> {
  try {
    return await client.requestJson<T>('GET', path);
  } catch (error) {
    if (isNotFound(error)) return undefined;
    throw error;
  }
}
