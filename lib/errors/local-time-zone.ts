/** The name of the server's time zone, which the pages that show local times (debug page, profiler) say they are in. */

/** The `TZ` the cached name was found for (null: none found yet). */
let namedFor: string | undefined | null = null;
let name = '';

/**
 * The IANA name of the zone a Date's local time is in (`TZ`, else the system's), or, for a `TZ` no zone
 * names (`Foo/Bar`, POSIX `UTC+3`, an empty one), the fixed offset a Date then keeps: `UTC`, `UTC-03:00`.
 * Found once per `TZ`: an Intl.DateTimeFormat costs about 50 µs, and a page names the zone up to four times.
 */
export function localTimeZoneName(): string {
  const tz = process.env['TZ'];
  if (tz !== namedFor) {
    name = findName();
    namedFor = tz;
  }
  return name;
}

function findName(): string {
  const zone = new Intl.DateTimeFormat().resolvedOptions().timeZone;
  // undefined, or Etc/Unknown for TZ="": Intl has no name, and a Date falls back to one offset all year.
  if (zone !== undefined && zone !== 'Etc/Unknown') return zone;
  const minutes = -new Date().getTimezoneOffset();
  if (minutes === 0) return 'UTC';
  const abs = Math.abs(minutes);
  return `UTC${minutes < 0 ? '-' : '+'}${String(Math.floor(abs / 60)).padStart(2, '0')}:${String(abs % 60).padStart(2, '0')}`;
}
