/** [min, median, max] of the benches' runs (the median of an even count is the mean of the middle two). */
export function minMedianMax(values: readonly number[]): [number, number, number] {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length / 2;
  const median = Number.isInteger(middle)
    ? ((sorted[middle - 1] ?? NaN) + (sorted[middle] ?? NaN)) / 2
    : (sorted[Math.floor(middle)] ?? NaN);
  return [sorted[0] ?? NaN, median, sorted.at(-1) ?? NaN];
}
