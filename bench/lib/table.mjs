// Plain-text tables for the terminal.

/**
 * Renders `rows` (arrays of strings) under `header`, columns padded to their widest cell;
 * `align` has one letter per column, l or r (default: first and last left, numbers right).
 */
export function formatTable(header, rows, align = `l${'r'.repeat(Math.max(0, header.length - 2))}l`) {
  const widths = header.map((title, column) => Math.max(title.length, ...rows.map((row) => String(row[column] ?? '').length)));
  const line = (cells) => cells
    .map((cell, column) => (align[column] === 'l' ? String(cell ?? '').padEnd(widths[column]) : String(cell ?? '').padStart(widths[column])))
    .join('   ')
    .trimEnd();
  return [line(header), ...rows.map(line)].join('\n');
}

/** A ratio as "0.97x", or "-" when either side is missing. */
export function formatRatio(value, base) {
  if (!Number.isFinite(value) || !Number.isFinite(base) || base === 0) return '-';
  return `${(value / base).toFixed(2)}x`;
}
