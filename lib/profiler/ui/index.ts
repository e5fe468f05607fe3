/** The profiler's pages and toolbar: pure functions from profile data to HTML. */
export type { ProfilerUrls } from './urls.js';
export { formatBytes, formatClockTime, formatDuration, formatProfileTime } from './format.js';
export { defaultPanel, extraPanels, PROFILER_PANELS, renderProfilePage, type ProfilePageInput } from './profile-page.js';
export { renderSearchPage, resultCountSentence, type SearchPageInput } from './search-page.js';
export { SHOWN_CHILDREN } from './values.js';
export { renderTokenNotFoundPage } from './token-not-found-page.js';
export { renderUnavailablePage } from './unavailable-page.js';
export { renderToolbar, renderToolbarLoader, type ToolbarInput, type ToolbarLoaderOptions } from './toolbar.js';
export { TOOLBAR_CSP_HASHES, TOOLBAR_POLICY, TOOLBAR_STORAGE_KEY } from './toolbar-assets.js';
export { profilerPagePolicy } from './page-assets.js';
export { readTimeSpan, type TimeSpan, type TimeSpanResult } from './time-input.js';
