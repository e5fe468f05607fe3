/** The profiler's pages: pure functions from profile data to HTML. */
export type { ProfilerUrls } from './urls.js';
export { formatBytes, formatClockTime, formatDuration, formatProfileTime } from './format.js';
export { defaultPanel, extraPanels, PROFILER_PANELS, renderProfilePage, type ProfilePageInput } from './profile-page.js';
export { renderSearchPage, resultCountSentence, type SearchPageInput } from './search-page.js';
export { renderTokenNotFoundPage } from './token-not-found-page.js';
