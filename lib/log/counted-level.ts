import { LogLevel } from './log-record.js';

/** The level a record is counted under by level: its own when one of the eight (0-7), else INFO, the name the logger panel gives a level no name has (another producer's on the bus). */
export function countedLevel(level: unknown): number {
  return typeof level === 'number' && Number.isInteger(level) && level >= 0 && level <= LogLevel.DEBUG ? level : LogLevel.INFO;
}
