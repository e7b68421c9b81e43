/**
 * The API server's store (etcd), brought to the same state before each measured phase. A phase leaves
 * its Ats, pods and Events behind as deleted revisions (tens of thousands at N = 10,000) until the API
 * server's own compaction, every 5 minutes; whichever phase came next then paid for the larger store
 * (the limit program's CPU per start went from 4.4 to 5.8-6.1 ms after a 10,000-At phase). Compacting
 * to the current revision and defragmenting before each phase gives both contenders the same store, and
 * leaves the periodic compaction little to do inside a window.
 */

interface StoreStatus {
  revision: string;
  dbSizeBytes: number;
}

async function call<T>(etcdUrl: string, path: string, body: unknown): Promise<T> {
  const response = await fetch(`${etcdUrl}${path}`, { method: 'POST', body: JSON.stringify(body) });
  if (!response.ok) throw new Error(`etcd ${path}: HTTP ${response.status} ${await response.text()}`);
  return (await response.json()) as T;
}

async function status(etcdUrl: string): Promise<StoreStatus> {
  // etcd's JSON gateway writes int64 fields as strings.
  const s = await call<{ header: { revision: string }; dbSize: string }>(
    etcdUrl,
    '/v3/maintenance/status',
    {},
  );
  return { revision: s.header.revision, dbSizeBytes: Number(s.dbSize) };
}

/** Compacts every revision up to the current one and defragments; one line saying what it did. */
export async function compactStore(etcdUrl: string): Promise<string> {
  const before = await status(etcdUrl);
  await call(etcdUrl, '/v3/kv/compaction', { revision: before.revision, physical: true });
  await call(etcdUrl, '/v3/maintenance/defragment', {});
  const after = await status(etcdUrl);
  const mb = (bytes: number): string => (bytes / 1e6).toFixed(1);
  return `store compacted at revision ${before.revision}, defragmented: ${mb(before.dbSizeBytes)} -> ${mb(after.dbSizeBytes)} MB`;
}
