/**
 * The candidate nearest to `name`, for a "Did you mean" in an error: at most a third of its length
 * in edits (one at least; a swap of two neighbours, a letter's case, counting as one), the first
 * of the nearest in the candidates' order; undefined when none is that near.
 */
export function closestName(name: string, candidates: Iterable<string>): string | undefined {
  let closest: string | undefined;
  let closestDistance = Infinity;
  const lower = name.toLowerCase();
  for (const candidate of candidates) {
    const most = Math.max(1, Math.floor(candidate.length / 3));
    // The distance is at least the difference in length: a long name (a client's, from a path parameter) costs no table.
    if (Math.abs(candidate.length - name.length) > most) continue;
    const distance = editDistance(lower, candidate.toLowerCase());
    if (distance <= most && distance < closestDistance) {
      closest = candidate;
      closestDistance = distance;
    }
  }
  return closest;
}

/** Insertions, deletions, substitutions and swaps of neighbours that turn `a` into `b` (optimal string alignment). */
function editDistance(a: string, b: string): number {
  let before: number[] = [];
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let distance = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) distance = Math.min(distance, before[j - 2]! + 1);
      current.push(distance);
    }
    before = previous;
    previous = current;
  }
  return previous[b.length]!;
}
