// What a debug server's profiler logs about dropped profiles, as the benches read it.

/** The closing total a profiler logs when it dropped any: "N of M profiles were dropped in all". */
const CLOSING_TOTAL = /(\d+) of (\d+) profiles were dropped in all/;

/** `{ dropped, recorded }` from a line holding the profiler's closing total, or null. */
export function closingDropTotal(line) {
  const match = CLOSING_TOTAL.exec(line);
  return match ? { dropped: Number(match[1]), recorded: Number(match[2]) } : null;
}
