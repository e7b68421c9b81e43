// Reads a family off a registry as a scraper sees it, for the unit and integration tests of metrics.ts.
import type { Registry } from 'prom-client';

/** The value of the sample `name{labels}` in the exposition (undefined: not exported). */
export async function valueOf(
  registry: Registry,
  name: string,
  labels: Record<string, string> = {},
): Promise<number | undefined> {
  const pairs = Object.entries(labels).map(([label, value]) => `${label}="${value}"`);
  const series = pairs.length === 0 ? name : `${name}{${pairs.join(',')}}`;
  const line = (await registry.metrics()).split('\n').find((sample) => sample.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}
