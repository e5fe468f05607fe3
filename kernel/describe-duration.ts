/** `30 seconds`, `1 second`, `0.2 seconds`, `1.5 seconds`. */
export function describeDuration(ms: number): string {
  const seconds = ms / 1000;
  return `${seconds} second${seconds === 1 ? '' : 's'}`;
}
