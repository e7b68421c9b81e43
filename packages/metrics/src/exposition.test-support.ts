// Reads the Prometheus text format the way a scraper sees it, so tests assert on what is exported
// rather than on prom-client internals. Not part of the package: excluded from the build.
import type { Registry } from 'prom-client';

export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export interface Family {
  name: string;
  help: string | undefined;
  type: string | undefined;
  samples: Sample[];
}

export interface Exposition {
  families: Map<string, Family>;
  samples: Sample[];
}

const SAMPLE_LINE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)(?:\s+\S+)?$/;
const LABEL_PAIR = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g;
const HISTOGRAM_SUFFIXES = ['_bucket', '_sum', '_count'];

function parseExposition(text: string): Exposition {
  const families = new Map<string, Family>();
  const samples: Sample[] = [];
  const family = (name: string): Family => {
    let found = families.get(name);
    if (found === undefined) {
      found = { name, help: undefined, type: undefined, samples: [] };
      families.set(name, found);
    }
    return found;
  };
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    const meta = /^# (HELP|TYPE) (\S+) ?(.*)$/.exec(line);
    if (meta !== null) {
      const [, kind, name = '', rest = ''] = meta;
      if (kind === 'HELP') family(name).help = rest.replaceAll('\\n', '\n').replaceAll('\\\\', '\\');
      else family(name).type = rest;
      continue;
    }
    const match = SAMPLE_LINE.exec(line);
    if (match === null) throw new Error(`unparsable exposition line: ${line}`);
    const [, name = '', labelText = '', valueText = ''] = match;
    const labels: Record<string, string> = {};
    for (const [, key = '', value = ''] of labelText.matchAll(LABEL_PAIR)) {
      labels[key] = value.replace(/\\(.)/g, (_, c: string) => (c === 'n' ? '\n' : c));
    }
    const sample = { name, labels, value: parseValue(valueText) };
    samples.push(sample);
    const suffix = HISTOGRAM_SUFFIXES.find((s) => name.endsWith(s));
    const base =
      suffix !== undefined && families.has(name.slice(0, -suffix.length))
        ? name.slice(0, -suffix.length)
        : name;
    family(base).samples.push(sample);
  }
  return { families, samples };
}

export async function scrape(registry: Registry): Promise<Exposition> {
  return parseExposition(await registry.metrics());
}

/** The value of the sample with exactly this name and label set, or undefined if not exported. */
export function valueOf(
  exposition: Exposition,
  name: string,
  labels: Record<string, string> = {},
): number | undefined {
  return exposition.samples.find((sample) => sample.name === name && sameLabels(sample.labels, labels))
    ?.value;
}

/** `[upper bound, cumulative count]` of every bucket of one histogram series, in exposition order. */
export function bucketsOf(
  exposition: Exposition,
  family: string,
  labels: Record<string, string>,
): [number, number][] {
  return exposition.samples
    .filter((sample) => sample.name === `${family}_bucket`)
    .filter(({ labels: { le, ...rest } }) => le !== undefined && sameLabels(rest, labels))
    .map((sample) => [parseValue(sample.labels.le ?? ''), sample.value]);
}

function sameLabels(a: Record<string, string>, b: Record<string, string>): boolean {
  const keys = Object.keys(a);
  return keys.length === Object.keys(b).length && keys.every((key) => a[key] === b[key]);
}

function parseValue(text: string): number {
  if (text === '+Inf') return Infinity;
  if (text === '-Inf') return -Infinity;
  // prom-client writes NaN as "Nan"; Prometheus parses floats case-insensitively.
  if (text.toLowerCase() === 'nan') return NaN;
  const value = Number(text);
  if (text === '' || Number.isNaN(value)) throw new Error(`not a sample value: ${text}`);
  return value;
}
