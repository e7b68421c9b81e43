/**
 * What one replica of the released program holds, read from the outside as the memory bench needs it:
 * its ports and inspector address from its log file, the Ats and pods its informers cache from
 * `GET /cache` (`--cache-dump-bind-address`: the objects themselves, counted, not an estimate), its heap
 * after a full GC forced through the inspector, and its RSS from /proc.
 *
 * The GC is forced with the inspector's `HeapProfiler.collectGarbage` because the program never calls
 * `gc()` (so `--expose-gc` would change nothing) and a bench must not change the program: the child is
 * started with `NODE_OPTIONS=--inspect=127.0.0.1:0` ({@link MEMORY_PROBE_ENV}), which listens on a
 * free port and prints it on stderr, which goes to the log file.
 */
import { readFile } from 'node:fs/promises';

/** The variables that make a replica readable here: the cache dump and the inspector, on free ports. */
export const MEMORY_PROBE_ENV: Readonly<Record<string, string>> = {
  CACHE_DUMP_BIND_ADDRESS: '127.0.0.1:0',
  NODE_OPTIONS: '--inspect=127.0.0.1:0',
};

export interface ProbeAddresses {
  metricsPort: number;
  cachePort: number;
  inspectorUrl: string;
}

/** The addresses its log announced so far; undefined until all three are there. */
export async function probeAddresses(logPath: string): Promise<ProbeAddresses | undefined> {
  let metricsPort = 0;
  let cachePort = 0;
  let inspectorUrl = '';
  for (const raw of (await readFile(logPath, 'utf8')).split('\n')) {
    // Node's own line, not JSON: "Debugger listening on ws://127.0.0.1:PORT/UUID".
    const inspector = /^Debugger listening on (ws:\/\/\S+)/.exec(raw);
    if (inspector?.[1] !== undefined) inspectorUrl = inspector[1];
    if (!raw.startsWith('{')) continue;
    const line = JSON.parse(raw) as { message?: unknown; port?: unknown };
    if (typeof line.message !== 'string' || typeof line.port !== 'number') continue;
    // The Manager's server; the start-up probes' one ('... during start-up') closes when it starts.
    if (line.message === 'serving /metrics, /healthz and /readyz') metricsPort = line.port;
    if (line.message.startsWith('serving GET /cache')) cachePort = line.port;
  }
  return metricsPort > 0 && cachePort > 0 && inspectorUrl !== ''
    ? { metricsPort, cachePort, inspectorUrl }
    : undefined;
}

interface CacheCounts {
  ats: number;
  pods: number;
  /** Every informer has synced. */
  synced: boolean;
}

/**
 * A GET, tried a second time when the first fails without a response: fetch reuses a kept-alive
 * connection, and the program's server may close it just as the next poll sends on it (ECONNRESET).
 */
async function get(url: string): Promise<Response> {
  try {
    return await fetch(url);
  } catch {
    return fetch(url);
  }
}

export async function cacheCounts(cachePort: number): Promise<CacheCounts> {
  const scopes = (await (await get(`http://127.0.0.1:${cachePort}/cache`)).json()) as {
    plural: string;
    synced: boolean;
    objects: Record<string, string>;
  }[];
  const count = (plural: string): number =>
    scopes
      .filter((scope) => scope.plural === plural)
      .reduce((sum, scope) => sum + Object.keys(scope.objects).length, 0);
  return { ats: count('ats'), pods: count('pods'), synced: scopes.every((scope) => scope.synced) };
}

/** Its /metrics: the sum of each family's samples, by name (as bench/replica.ts reads it). */
export async function metricSums(metricsPort: number): Promise<Map<string, number>> {
  const text = await (await get(`http://127.0.0.1:${metricsPort}/metrics`)).text();
  const sums = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (line.startsWith('#') || line === '') continue;
    const name = /^[a-zA-Z_:][a-zA-Z0-9_:]*/.exec(line)?.[0] ?? '';
    sums.set(name, (sums.get(name) ?? 0) + Number(line.slice(line.lastIndexOf(' ') + 1)));
  }
  return sums;
}

/**
 * Forces a full GC through the inspector, then returns V8's used heap as the inspector reads it
 * (`Runtime.getHeapUsage`), which the program's `nodejs_heap_used_after_gc_bytes` should then equal
 * within a few KB: the bench prints both.
 */
export async function usedHeapAfterForcedGc(inspectorUrl: string): Promise<number> {
  const socket = new WebSocket(inspectorUrl);
  try {
    await new Promise((resolve, reject) => {
      socket.addEventListener('open', resolve, { once: true });
      socket.addEventListener(
        'error',
        () => {
          reject(new Error(`no inspector at ${inspectorUrl}`));
        },
        { once: true },
      );
    });
    const pending = new Map<number, (result: unknown) => void>();
    socket.addEventListener('message', (event) => {
      const reply = JSON.parse(String(event.data)) as { id?: number; result?: unknown };
      if (reply.id !== undefined) pending.get(reply.id)?.(reply.result);
    });
    let nextId = 1;
    const call = (method: string): Promise<unknown> =>
      new Promise((resolve) => {
        const id = nextId++;
        pending.set(id, resolve);
        socket.send(JSON.stringify({ id, method }));
      });
    await call('HeapProfiler.collectGarbage');
    const { usedSize } = (await call('Runtime.getHeapUsage')) as { usedSize: number };
    return usedSize;
  } finally {
    socket.close();
  }
}

/** Resident set size in bytes, from /proc (the kernel's figure, not the process's own). */
export async function rssBytes(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  return Number(/^VmRSS:\s+(\d+) kB$/m.exec(status)?.[1] ?? Number.NaN) * 1024;
}
