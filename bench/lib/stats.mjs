// Small statistics for bench samples.

/** The median of a list of numbers (mean of the two middle values for an even count). */
export function median(values) {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

/** (max - min) / median: how far apart the rounds were, 0 for a single sample. */
export function spread(values) {
  if (values.length < 2) return 0;
  return (Math.max(...values) - Math.min(...values)) / median(values);
}
