/** Order statistics for the bench's figures. */

/** Nearest-rank percentile (`p` in 0..100); NaN for no values. */
export function percentile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.max(0, Math.ceil((p / 100) * sorted.length) - 1)] ?? Number.NaN;
}

export interface Spread {
  min: number;
  median: number;
  max: number;
}

/** min/median/max of one figure over the runs (the median of an even count is the lower middle value). */
export function spread(values: readonly number[]): Spread {
  return { min: percentile(values, 0), median: percentile(values, 50), max: percentile(values, 100) };
}

/** `min / median / max` of `values`, each with `digits` decimals and `unit` after it (`x` for ratios). */
export function formatSpread(values: readonly number[], digits: number, unit = ''): string {
  const { min, median, max } = spread(values);
  return [min, median, max].map((value) => `${value.toFixed(digits)}${unit}`).join(' / ');
}
