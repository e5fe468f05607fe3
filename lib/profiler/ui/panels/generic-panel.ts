/** The panel of a collector the UI has no dedicated page for (embedders add their own): its data as JSON. */
import { html, type SafeHtml } from '../../../errors/index.js';
import { isLeftOutData } from '../../profile.js';
import { renderJson, renderNoData } from '../values.js';
import type { PanelContext } from './panel-context.js';

/** Renders any collector's data as pretty JSON, under its name. */
export function renderGenericPanel({ profile }: PanelContext, name: string): SafeHtml {
  const data = profile.collectors[name];
  return html`<h2>${name}</h2>
<p class="muted">Data recorded by the <code>${name}</code> collector.</p>
${data === undefined || data === null ? html`<p class="empty">No data</p>` : isLeftOutData(data) ? renderNoData(name, data) : renderJson(data)}`;
}
