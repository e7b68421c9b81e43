/**
 * `--cache-dump-bind-address`: an HTTP endpoint that shows what each informer holds, so a fault test can
 * compare every cache with a fresh LIST of its scope (informers that fell out of sync after a silent
 * watch or a 410 are the defect it looks for). Off by default. It shows each cached object's namespace,
 * name and resourceVersion, nothing of its content; still, the names of everything the controller
 * watches are visible to whoever reaches the port: bind it where only the test harness does.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { SharedInformerFactory } from '@loopwright/informer';

/** One informer's cache: its scope as a LIST would name it, and its objects' resourceVersions. */
export interface CachedScope {
  group: string;
  version: string;
  plural: string;
  /** Absent: every namespace (or a cluster-scoped resource). */
  namespace?: string;
  labelSelector?: string;
  fieldSelector?: string;
  /** Whether the informer has synced; an unsynced cache is not expected to equal a LIST. */
  synced: boolean;
  /** The resourceVersion of the last list, event or bookmark the informer saw. */
  resourceVersion?: string;
  /** `namespace/name` (or `name`) -> resourceVersion, for every cached object. */
  objects: Record<string, string>;
}

/** Every informer of the factory, as {@link CachedScope}. */
export function cacheDump(factory: SharedInformerFactory): CachedScope[] {
  return factory.scopes().map(({ scope, informer }) => {
    const objects: Record<string, string> = {};
    for (const object of informer.lister.list()) {
      const { namespace, name, resourceVersion } = object.metadata ?? {};
      objects[namespace ? `${namespace}/${name ?? ''}` : (name ?? '')] = resourceVersion ?? '';
    }
    const { lastSyncResourceVersion } = informer;
    return {
      group: scope.group,
      version: scope.version,
      plural: scope.plural,
      ...(scope.namespace === undefined ? {} : { namespace: scope.namespace }),
      ...(scope.labelSelector ? { labelSelector: scope.labelSelector } : {}),
      ...(scope.fieldSelector ? { fieldSelector: scope.fieldSelector } : {}),
      synced: informer.hasSynced(),
      ...(lastSyncResourceVersion === undefined ? {} : { resourceVersion: lastSyncResourceVersion }),
      objects,
    };
  });
}

export interface CacheDumpServer {
  readonly port: number;
  close(): Promise<void>;
}

/** Serves `GET /cache` ({@link cacheDump} as JSON); anything else is a 404. */
export async function startCacheDumpServer(
  address: { port: number; host?: string },
  factory: SharedInformerFactory,
): Promise<CacheDumpServer> {
  const server = createServer((request, response) => {
    if (request.method !== 'GET' || request.url !== '/cache') {
      response.writeHead(404).end();
      return;
    }
    response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(cacheDump(factory)));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(address.port, address.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => {
          resolve();
        });
      }),
  };
}
