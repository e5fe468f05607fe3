/**
 * The profiler's URLs, supplied by whoever mounts the pages, so rendering never hard-codes routes.
 * Every function returns a URL ready for an `href` (the renderers escape it).
 */
export interface ProfilerUrls {
  /** A profile's page; without `panel`, the page's default panel. */
  panel(token: string, panel?: string): string;
  /** The search results page; with criteria, its query string. Without, the form's `action`. */
  search(criteria?: Record<string, string>): string;
  /** The most recent profile. */
  latest(): string;
  /** The toolbar fragment of a profile (what the toolbar loader fetches). */
  toolbar(token: string): string;
}
