import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { describe, it } from 'node:test';
import { promisify } from 'node:util';

const run = promisify(execFile);
const createMetricsUrl = new URL('./create-metrics.ts', import.meta.url).href;

/**
 * Runs `body` as an ES module in a fresh Node process with `--expose-gc`, so the test decides exactly
 * when a major GC happens (`gc()` is a full mark-compact); `createMetrics` is in scope. Resolves what
 * the module printed.
 */
async function inChildProcess(body: string): Promise<string> {
  const source = `const { createMetrics } = await import(${JSON.stringify(createMetricsUrl)});\n${body}`;
  const { stdout } = await run(process.execPath, ['--expose-gc', '--input-type=module', '--eval', source], {
    timeout: 60_000,
  });
  return stdout;
}

// Shared by the child scripts: a forced major GC, resolved once GC observers have been told of it
// (an observer created later than the metric's is called after it; the interval only holds the process
// open until then, since Node delivers GC entries without doing so), and the gauge's value.
const HELPERS = `
import { PerformanceObserver, constants } from 'node:perf_hooks';
const metrics = createMetrics();
const heapAfterGc = async () =>
  (await metrics.registry.getSingleMetric('nodejs_heap_used_after_gc_bytes').get()).values[0].value;
const majorGc = () =>
  new Promise((resolve) => {
    const holdOpen = setInterval(() => undefined, 60_000);
    const observer = new PerformanceObserver((list) => {
      if (!list.getEntries().some((entry) => entry.detail.kind === constants.NODE_PERFORMANCE_GC_MAJOR)) return;
      observer.disconnect();
      clearInterval(holdOpen);
      resolve();
    });
    observer.observe({ entryTypes: ['gc'] });
    globalThis.gc();
  });
const retain = () => Array.from({ length: 1_000_000 }, (_, i) => ({ i, text: 'x' + i }));
`;

const MIB = 1024 * 1024;

describe('nodejs_heap_used_after_gc_bytes', () => {
  it('reads 0 before the first major GC, then the heap that major GCs leave', async () => {
    const output = await inChildProcess(`${HELPERS}
const before = await heapAfterGc();
let retained = retain();
await majorGc();
const holding = await heapAfterGc();
retained = undefined;
await majorGc();
const released = await heapAfterGc();
console.log(JSON.stringify({ before, holding, released }));
metrics.close();
`);
    const { before, holding, released } = JSON.parse(output) as {
      before: number;
      holding: number;
      released: number;
    };
    assert.equal(before, 0);
    assert.ok(released > 0, `after a major GC: ${released}`);
    // A million small objects (about 60 MiB) retained across the first GC, collected by the second.
    assert.ok(holding - released > 30 * MIB, `holding ${holding}, released ${released}`);
  });

  it('stops following GCs once closed, keeping its last value', async () => {
    const output = await inChildProcess(`${HELPERS}
await majorGc();
metrics.close();
const closed = await heapAfterGc();
const retained = retain();
await majorGc();
console.log(JSON.stringify({ closed, later: await heapAfterGc(), kept: retained.length }));
`);
    const { closed, later } = JSON.parse(output) as { closed: number; later: number };
    assert.ok(closed > 0);
    assert.equal(later, closed);
  });

  it('does not keep the process alive', async () => {
    // Never closed: the process ends by itself once its script has run (execFile's timeout would fail it).
    assert.equal(await inChildProcess(`${HELPERS}\nawait majorGc();\nconsole.log('done');\n`), 'done\n');
  });
});
