// Runs axe-core, the accessibility rule engine, over a page's HTML in jsdom, for the accessibility tests.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { Script } from 'node:vm';
import type { AxeResults, Result, RunOptions } from 'axe-core';
import { JSDOM, VirtualConsole } from 'jsdom';

const require = createRequire(import.meta.url);
/** axe-core's browser build, run in each page's window as a browser extension would inject it; compiled once for all pages. */
const AXE_SCRIPT = new Script(readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8'), { filename: 'axe.min.js' });

/**
 * Rules of axe's default set (WCAG 2.0-2.2 A and AA, and best practices) turned off here, and why:
 * each needs a layout engine, which jsdom has none of, so it would pass or be skipped whatever the page.
 */
export const DISABLED_RULES: Readonly<Record<string, string>> = {
  'color-contrast': 'needs the rendered colours of each text: test/unit/profiler/ui/contrast.test.ts checks the stylesheets instead',
  // jsdom gives every element a scroll size of 0, so the rule never applies: scrollableWithoutFocus() checks the stylesheet's scrollers instead.
  'scrollable-region-focusable': 'needs scroll sizes: scrollableWithoutFocus() checks every element the stylesheet lets scroll',
};

/** Experimental rules turned on: they read the markup alone, and what they check (table headers, fake headings) is what these pages are made of. */
const EXPERIMENTAL_RULES = ['td-has-header', 'table-fake-caption', 'p-as-heading', 'focus-order-semantics'];

const RUN_OPTIONS: RunOptions = {
  rules: Object.fromEntries([
    ...Object.keys(DISABLED_RULES).map((id) => [id, { enabled: false }]),
    ...EXPERIMENTAL_RULES.map((id) => [id, { enabled: true }]),
  ]),
  resultTypes: ['violations', 'incomplete'],
};

/** One finding, as a test failure shows it: rule, impact, and the elements it names. */
export interface Finding {
  rule: string;
  impact: string | null | undefined;
  help: string;
  /** `violation`, or `incomplete`: axe could not decide (and, in jsdom, often could not run the rule at all). */
  kind: 'violation' | 'incomplete';
  nodes: string[];
}

/** How a page is loaded. */
export interface PageOptions {
  /** Apply the page's narrow-screen rules (`max-width` media and container queries), as jsdom applies only `@media screen` ones. */
  narrow?: boolean;
}

/** The page loaded in jsdom, its own scripts run (the profiler's level filters, the toolbar's state and loader). */
export function loadPage(page: string, options: PageOptions = {}): JSDOM {
  const text = options.narrow === true ? narrowed(page) : page;
  const dom = new JSDOM(text, { runScripts: 'dangerously', pretendToBeVisual: true, url: 'http://127.0.0.1:8000/', virtualConsole: new VirtualConsole() });
  // axe asks the layout whether a modal overlay covers the page (isModalOpen); jsdom has no
  // elementsFromPoint, and without it axe skips landmark-one-main and page-has-heading-one as
  // "incomplete" on every page. No page here has an overlay: no element is at any point.
  dom.window.document.elementsFromPoint = () => [];
  return dom;
}

/**
 * The page with its narrow-screen rules made unconditional: a `max-width` media or container query
 * becomes `@media screen`, the one kind jsdom's style computation applies. What a phone, or a desktop
 * zoomed to 400%, gets: tables shown as cards, columns hidden.
 */
export function narrowed(page: string): string {
  const result = page.replace(/@(?:media|container)[^{};]*\(max-width:[^{};]*\{/g, '@media screen {');
  if (result === page) throw new Error('The page has no max-width media or container query: nothing to narrow');
  return result;
}

/** The parts of axe's API the tests use, in a page's window. */
interface AxeWindow {
  axe: {
    run(context: unknown, options: RunOptions): Promise<AxeResults>;
    setup(context: unknown): void;
    teardown(): void;
    utils: { getNodeFromTree(element: Element): unknown };
    commons: { dom: { isVisibleToScreenReaders(node: unknown): boolean } };
  };
}

/** The page's window with axe in it. */
function withAxe(dom: JSDOM): AxeWindow {
  AXE_SCRIPT.runInContext(dom.getInternalVMContext());
  return dom.window as unknown as AxeWindow;
}

/**
 * axe's violations and undecided results for the page, and its table headers hidden from screen
 * readers (see hiddenHeaders), as a violation of `th-hidden`; an empty list is a pass.
 */
export async function axeFindings(page: string, options: PageOptions = {}): Promise<Finding[]> {
  const dom = loadPage(page, options);
  try {
    const window = withAxe(dom);
    const results = await window.axe.run(dom.window.document, RUN_OPTIONS);
    const hidden = hiddenHeaders(dom, window);
    return [
      ...results.violations.map((result) => finding(result, 'violation')),
      ...results.incomplete.map((result) => finding(result, 'incomplete')),
      ...(hidden.length > 0 ? [{ rule: 'th-hidden', impact: 'serious', help: 'Table headers must reach screen readers', kind: 'violation' as const, nodes: hidden }] : []),
    ];
  } finally {
    dom.window.close();
  }
}

function finding(result: Result, kind: Finding['kind']): Finding {
  return {
    rule: result.id,
    impact: result.impact,
    help: result.help,
    kind,
    nodes: result.nodes.map((node) => `${node.html.slice(0, 160)}${node.failureSummary !== undefined ? ` (${node.failureSummary.replace(/\s+/g, ' ').trim()})` : ''}`),
  };
}

const FOCUSABLE = 'a[href], button, input:not([type="hidden"]), select, textarea, summary, [tabindex]:not([tabindex="-1"])';

/**
 * Elements the stylesheet lets scroll (`overflow` auto or scroll) that a keyboard cannot reach: not
 * focusable themselves, with nothing focusable inside. axe's scrollable-region-focusable checks the
 * same of the elements that do overflow, which jsdom cannot tell: here any of them may (a long line,
 * a long JSON value), so each must be reachable. `except`: a selector of scrollers known not to overflow.
 */
export function scrollableWithoutFocus(page: string, options: PageOptions & { except?: string } = {}): string[] {
  const dom = loadPage(page, options);
  try {
    const { window } = dom;
    const stuck: string[] = [];
    for (const element of window.document.body.querySelectorAll('*')) {
      const style = window.getComputedStyle(element);
      const scrolls = [style.overflow, style.overflowX, style.overflowY].some((value) => value === 'auto' || value === 'scroll');
      if (!scrolls || element.matches(FOCUSABLE) || element.querySelector(FOCUSABLE) !== null) continue;
      if (options.except !== undefined && element.matches(options.except)) continue;
      stuck.push(element.outerHTML.slice(0, 100));
    }
    return stuck;
  } finally {
    dom.window.close();
  }
}

/**
 * Column and row headers of the page's tables that a screen reader does not get, by axe's own
 * judgement (isVisibleToScreenReaders: display none, visibility hidden, aria-hidden...). axe's
 * td-has-header rule finds a cell's headers whether they are hidden or not, so it passes a table
 * whose header row the stylesheet hides, which a screen reader reads as cells without headers.
 */
function hiddenHeaders(dom: JSDOM, window: AxeWindow): string[] {
  window.axe.setup(dom.window.document);
  try {
    return [...dom.window.document.querySelectorAll('table th')]
      .filter((header) => !window.axe.commons.dom.isVisibleToScreenReaders(window.axe.utils.getNodeFromTree(header)))
      .map((header) => `${header.closest('table')?.className ?? ''} table: <th>${header.textContent ?? ''}</th>`);
  } finally {
    window.axe.teardown();
  }
}
