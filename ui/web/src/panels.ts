// The side panel's views: a column, a table, a link (every role, expression, job, first and last
// seen, the last run and its status), a job (its runs, reads, writes, status history), the impact
// list with its CSV export, and the SQL panel.
import { api, APIError, type ColumnDetail, type ColumnTags, type Config, type DatasetDetail, type Hop, type ImpactAnswer, type JobDetail, type Preview, type DatasetsAnswer, type Role, type SQLStatement, type TagSummary } from './api';
import { clear, el, short, visible, when } from './dom';
import type { Link } from './model';

export interface Actions {
  lineage(p: { column?: string; dataset?: string; dir: 'up' | 'down' }): void;
  impact(p: { column?: string; dataset?: string }): void;
  job(key: string): void;
  preview(p: Preview): void;
  csv(p: { column?: string; dataset?: string }): string;
  highlight(path: Hop[]): number; // the hops the drawing has
  reach(tag: string): void;
}

function dl(...pairs: [string, Node | string][]): HTMLDListElement {
  const d = el('dl');
  for (const [k, v] of pairs) d.append(el('dt', {}, k), el('dd', {}, v));
  return d;
}

function button(label: string, fn: () => void, attrs: Record<string, string> = {}): HTMLButtonElement {
  const b = el('button', { type: 'button', ...attrs }, label);
  b.addEventListener('click', fn);
  return b;
}

function jobLink(key: string, a: Actions): HTMLAnchorElement {
  const link = el('a', { href: `#/job?key=${encodeURIComponent(key)}`, class: 'job', 'data-job': key }, short(key));
  link.addEventListener('click', (e) => {
    e.preventDefault();
    a.job(key);
  });
  return link;
}

function list<T>(items: T[], f: (x: T) => Node | string, empty = 'none'): HTMLElement {
  if (items.length === 0) return el('span', { class: 'muted' }, empty);
  return el('ul', {}, ...items.map((x) => el('li', {}, f(x))));
}

export function welcome(panel: HTMLElement) {
  clear(panel);
  panel.append(
    el('h2', {}, 'Column lineage'),
    el('p', {}, 'Search a table, column or job above ( / ). A column opens its upstream: where its values come from and which columns decide its rows, drawn as table boxes with their columns.'),
    el('p', {}, 'Click a column or an arrow for its roles, expressions, job and runs; ◀ ▶ on a box take one more step, ▾ collapses it. Keys: f fit, + − zoom, arrows pan, u d direction, i impact, s SQL, Esc close.'),
    legend(),
  );
}

export function legend(): HTMLElement {
  const item = (cls: string, label: string) => el('li', {}, el('span', { class: `swatch ${cls}` }), label);
  return el('ul', { class: 'legend' },
    item('l-direct', 'DIRECT: the values flow (identity, transformation, aggregation)'),
    item('l-indirect', 'INDIRECT: a condition or window picks the value'),
    item('l-rows', 'rows: the column decides which rows the table gets (filter, join, group by, sort)'),
    item('l-rows-partial', 'some rows: it decides only the rows one branch of a UNION brings (click for which)'),
    item('l-stale', 'stale: a later run of the job did not confirm it'),
    item('l-preview', 'SQL panel: not run yet'),
    item('l-inferred', 'SQL panel: a table nobody described, its schema inferred from the SQL (dashed)'));
}

/** A column's tags: each with its status, source and path from the tagged column, hop by hop. */
export function columnTags(ct: ColumnTags, a: Actions): HTMLElement {
  const s = el('div', { class: 'tags' }, el('h3', {}, `Tags (${ct.tags.length})`));
  if (ct.tags.length === 0) s.append(el('p', { class: 'muted' }, 'No tag reaches this column.'));
  for (const c of ct.tags) {
    const hops = el('ol', { class: 'path' }, ...c.path.map((h) => el('li', {},
      `${short(h.from)} → ${short(h.to)}`, h.job ? el('span', { class: 'hop-job' }, ` · job ${short(h.job)}`) : null,
      el('span', { class: 'muted' }, h.kind === 'FEEDS' ? ` · ${(h.roles ?? []).map((r) => `${r.type}/${r.subtype}${r.masked ? ' masked' : ''}${r.expr ? ` ${visible(r.expr)}` : ''}`).join(', ')}` : ` · ${h.kind === 'FIELD' ? 'a field of the struct' : 'part of the struct'}`))));
    const note = el('span', { class: 'muted' });
    s.append(el('section', { class: 'tag', 'data-tag': c.tag.key },
      el('p', {}, el('span', { class: `tagbadge tag-${c.status}` }, `${visible(c.tag.key)}=${visible(c.tag.value)}`), ` ${c.status}`,
        el('br'), el('span', { class: 'muted' }, `source ${visible(c.tag.source)}; `),
        c.path.length === 0 ? 'set on this column' : `from ${short(c.from)} in ${c.path.length} hop(s)`),
      c.path.length > 0 ? hops : null,
      c.path.length > 0 ? el('div', { class: 'actions' }, button('Highlight the path', () => {
        const n = a.highlight(c.path);
        note.textContent = ` ${n} of ${c.path.length} hop(s) are in the drawing`;
      }, { class: 'highlight' }), button(`Reach of ${visible(c.tag.key)}`, () => a.reach(c.tag.key)), note) : null));
  }
  if (ct.truncated) s.append(el('p', { class: 'note' }, 'The walk stopped at its bounds: tags further upstream are not shown.'));
  return s;
}

/** Every tag, its settings and sources, with its reach as CSV and JSON. */
export function tagList(panel: HTMLElement, tags: TagSummary[], a: Actions) {
  clear(panel);
  panel.append(el('h2', {}, 'Tags'), el('p', { class: 'muted' }, 'Where tagged data goes: each tag follows DIRECT lineage downstream and stops where a transformation masks it.'));
  if (tags.length === 0) panel.append(el('p', {}, 'No tag in the graph: colline tags load (docs/tags.md).'));
  for (const t of tags) {
    panel.append(el('section', { class: 'tag', 'data-tag': t.key },
      el('h3', {}, el('span', { class: 'tagbadge tag-unmasked' }, visible(t.key)), t.policy.description ? ` ${visible(t.policy.description)}` : ''),
      dl(['rules', `${t.rules}`], ['sources', Object.entries(t.sources).map(([s, n]) => `${visible(s)} (${n})`).join(', ') || '–'],
        ['aggregation', t.policy.aggregation], ['allowed in', t.policy.allowed?.map(visible).join(', ') || 'anywhere']),
      el('div', { class: 'actions' }, button('Reach', () => a.reach(t.key)),
        el('a', { class: 'button', href: api.tagReachURL(t.key, 'csv'), download: 'colline-tag-reach.csv' }, 'CSV'),
        el('a', { class: 'button', href: api.tagReachURL(t.key, 'json'), download: 'colline-tag-reach.json' }, 'JSON'))));
  }
}

/** Everything a tag reaches, per dataset: its columns by status and its indirect uses; a dataset's
 * columns on demand (tagReachIn); every column in the full report (CSV, JSON). */
export function tagReach(panel: HTMLElement, r: DatasetsAnswer, a: Actions) {
  clear(panel);
  const un = r.datasets.reduce((n, d) => n + d.unmasked, 0);
  const reached = r.datasets.filter((d) => d.unmasked + d.aggregated + d.masked > 0).length;
  panel.append(el('h2', {}, `Reach of ${visible(r.tag)}`),
    el('p', {}, `${r.sources.length} tagged column(s); ${r.columns} column(s) in ${reached} dataset(s): ${un} unmasked, ${r.columns - un} masked or aggregated; ${r.indirect} indirect use(s).`),
    el('div', { class: 'actions' }, el('a', { class: 'button', href: api.tagReachURL(r.tag, 'csv'), download: 'colline-tag-reach.csv' }, 'CSV'),
      el('a', { class: 'button', href: api.tagReachURL(r.tag, 'json'), download: 'colline-tag-reach.json' }, 'JSON')),
    el('p', { class: 'muted' }, 'Every column with its path, and every indirect use: the CSV and JSON report.'));
  if (r.truncated) panel.append(el('p', { class: 'note' }, 'Cut at the walk\'s bounds.'));
  const table = el('table', { class: 'reach' }, el('tr', {}, el('th', {}, 'dataset'), el('th', {}, 'unmasked'), el('th', {}, 'masked or aggregated'),
    el('th', {}, 'indirect uses'), el('th', {}, 'policy')));
  for (const d of r.datasets) {
    const status = d.unmasked > 0 ? 'unmasked' : d.aggregated > 0 ? 'aggregated' : d.masked > 0 ? 'masked' : 'indirect';
    const row = el('tr', { class: `dataset tag-${status}`, 'data-dataset': d.dataset });
    const name = d.unmasked + d.aggregated + d.masked > 0
      ? button(short(d.dataset), () => void reachIn(row, r.tag, d.dataset, a), { class: 'open-dataset', title: 'its columns' })
      : el('span', {}, short(d.dataset));
    row.append(el('td', {}, name, d.source ? ' (tagged here)' : ''), el('td', {}, `${d.unmasked}`), el('td', {}, `${d.aggregated + d.masked}`),
      el('td', {}, `${d.uses}`), el('td', {}, d.allowed ? '' : 'not allowed'));
    table.append(row);
  }
  panel.append(table);
}

/** Under a dataset's row of the reach: the columns of it that the tag reaches, once. */
async function reachIn(row: HTMLElement, tag: string, dataset: string, a: Actions) {
  if (row.dataset.open) return;
  row.dataset.open = 'true';
  try {
    const r = await api.tagReachIn(tag, dataset);
    const rows = r.columns.map((c) => {
      const link = el('a', { href: '#', class: 'column' }, short(c.column));
      link.addEventListener('click', (e) => {
        e.preventDefault();
        a.lineage({ column: c.column, dir: 'up' });
      });
      return el('tr', { class: `reached tag-${c.status}`, 'data-column': c.column }, el('td', {}, link), el('td', {}, c.status),
        el('td', {}, `${c.arrivals[0]?.path?.length ?? 0} hop(s)`), el('td', {}, ''), el('td', {}, c.allowed ? '' : 'not allowed'));
    });
    row.after(...rows);
  } catch (err) {
    delete row.dataset.open;
    row.after(el('tr', { class: 'error' }, el('td', { colspan: '5' }, err instanceof APIError ? err.message : String(err))));
  }
}

export function column(panel: HTMLElement, c: ColumnDetail, a: Actions, tags?: ColumnTags) {
  clear(panel);
  panel.append(
    el('h2', { class: 'column-title' }, visible(c.name)),
    el('p', { class: 'key' }, visible(c.key)),
    dl(['table', short(c.dataset)], ['type', visible(c.dataType ?? '–')], ['first seen', when(c.firstSeen)], ['last seen', when(c.lastSeen)],
      ['written by', list(c.writers, (j) => jobLink(j, a), 'no job (a source)')]),
    el('div', { class: 'actions' },
      button('◀ Upstream', () => a.lineage({ column: c.key, dir: 'up' })),
      button('Downstream ▶', () => a.lineage({ column: c.key, dir: 'down' })),
      button('Impact list', () => a.impact({ column: c.key }))),
  );
  if (tags) panel.append(columnTags(tags, a));
}

export function dataset(panel: HTMLElement, d: DatasetDetail, a: Actions) {
  clear(panel);
  panel.append(
    el('h2', {}, visible(d.name)),
    el('p', { class: 'key' }, visible(d.key)),
    dl(['kind', d.kind || '–'], ['location', visible(d.location ?? '–')], ['first seen', when(d.firstSeen)], ['last seen', when(d.lastSeen)],
      ['written by', list(d.writers, (j) => jobLink(j, a))], ['read by', list(d.readers, (j) => jobLink(j, a))],
      ['columns', `${d.columns.length}`]),
    el('div', { class: 'actions' },
      button('◀ Upstream', () => a.lineage({ dataset: d.key, dir: 'up' })),
      button('Downstream ▶', () => a.lineage({ dataset: d.key, dir: 'down' })),
      button('Impact list', () => a.impact({ dataset: d.key }))),
    list(d.columns, (c) => `${visible(c.name)}${c.dataType ? ': ' + visible(c.dataType) : ''}`),
  );
}

export async function link(panel: HTMLElement, l: Link, a: Actions) {
  clear(panel);
  const to = l.kind === 'FEEDS' ? short(l.target) : `${short(l.target)} (${l.partial ? 'which of some of its rows' : 'which rows'})`;
  panel.append(
    el('h2', {}, l.kind === 'FEEDS' ? 'Column edge' : 'Row-level dependency'),
    el('p', { class: 'key' }, `${short(l.source)} → ${to}`),
  );
  if (l.preview) panel.append(el('p', { class: 'note' }, 'From the SQL panel: not run, not in the graph.'));
  for (const e of l.edges) {
    const rowsOf = (r: Role) => (r.rows ?? []).length === 0 ? 'every row' : `only rows from ${r.rows!.map(short).join(', ')} (a UNION branch)`;
    const head = [el('th', {}, 'type'), el('th', {}, 'subtype'), el('th', {}, 'masking'), el('th', {}, 'expression')];
    if (l.kind === 'DECIDES_ROWS') head.push(el('th', {}, 'rows'));
    const roles = el('table', { class: 'roles' }, el('tr', {}, ...head),
      ...e.roles.map((r) => el('tr', { class: `role role-${r.type.toLowerCase()}` }, el('td', {}, r.type), el('td', {}, r.subtype), el('td', {}, r.masked ? 'masked' : ''), el('td', { class: 'expr' }, visible(r.expr ?? '')),
        l.kind === 'DECIDES_ROWS' ? el('td', { class: 'rows' }, visible(rowsOf(r))) : null)));
    const run = el('dd', { class: 'run' }, e.lastRun ? '…' : '–');
    const section = el('section', { class: 'edge', 'data-job': e.job },
      el('h3', {}, 'job ', jobLink(e.job, a), e.stale ? el('span', { class: 'badge stale' }, 'stale') : null),
      roles,
      el('dl', {}, el('dt', {}, 'first seen'), el('dd', {}, when(e.firstSeen)), el('dt', {}, 'last seen'), el('dd', {}, when(e.lastSeen)), el('dt', {}, 'last run'), run));
    panel.append(section);
    if (e.lastRun) {
      api.run(e.lastRun).then((r) => {
        clear(run);
        run.append(el('span', { class: `status status-${r.status}` }, r.status), ` ${when(r.endedAt ?? r.emittedAt)}`, el('br'),
          el('span', { class: 'muted' }, `app ${visible(r.appId)}, query ${r.executionId}${r.sparkVersion ? `, Spark ${r.sparkVersion}` : ''}`),
          r.connect ? el('br') : '', r.connect ? el('span', { class: 'muted', title: 'as the Spark Connect client said it: not authenticated' },
            `Spark Connect user ${visible(r.connect.userId)}, session ${visible(r.connect.sessionId)}`) : '',
          r.parent ? el('br') : '', r.parent ? el('span', { class: 'muted' }, `under ${visible(r.parent.job)} run ${visible(r.parent.key)}`) : '');
      }).catch((err: Error) => {
        clear(run);
        run.append(el('span', { class: 'error' }, err.message));
      });
    }
  }
}

export function job(panel: HTMLElement, j: JobDetail, a: Actions) {
  clear(panel);
  const history = el('div', { class: 'history', 'aria-label': 'status of the newest runs, oldest first' },
    ...[...j.runs].reverse().map((r) => el('span', { class: `tick status-${r.status}`, title: `${r.status} ${when(r.endedAt ?? r.emittedAt)}` })));
  const access = (xs: JobDetail['reads']) => list(xs, (x) => {
    const link = el('a', { href: '#', 'data-dataset': x.dataset }, short(x.dataset));
    link.addEventListener('click', (e) => {
      e.preventDefault();
      a.lineage({ dataset: x.dataset, dir: 'up' });
    });
    return el('span', {}, link, el('span', { class: 'muted' }, ` ${x.runs} runs, last ${when(x.last)}`));
  });
  panel.append(
    el('h2', { class: 'job-title' }, `Job ${visible(j.name)}`),
    el('p', { class: 'key' }, visible(j.key)),
    dl(['runs', `${j.runCount}`], ['by status', Object.entries(j.statuses).map(([s, n]) => `${s} ${n}`).join(', ') || '–'],
      ['first seen', when(j.firstSeen)], ['last seen', when(j.lastSeen)]),
    el('h3', {}, 'Status history'), history,
    el('h3', {}, 'Writes'), access(j.writes),
    el('h3', {}, 'Reads'), access(j.reads),
    el('h3', {}, `Newest runs (${j.runs.length})`),
    el('table', { class: 'runs' }, el('tr', {}, el('th', {}, 'ended'), el('th', {}, 'status'), el('th', {}, 'query'), el('th', {}, 'writes')),
      ...j.runs.map((r) => el('tr', { 'data-run': r.key }, el('td', {}, when(r.endedAt ?? r.emittedAt)), el('td', {}, el('span', { class: `status status-${r.status}` }, r.status)),
        el('td', {}, `${r.executionId} ${r.funcName ?? ''}`), el('td', {}, r.writes.map(short).join(', '))))),
  );
}

export function impact(panel: HTMLElement, ans: ImpactAnswer, from: { column?: string; dataset?: string }, a: Actions) {
  clear(panel);
  const datasets = new Set(ans.impact.map((x) => x.dataset));
  panel.append(
    el('h2', {}, 'Impact'),
    el('p', { class: 'key' }, `of changing ${short(from.column ?? from.dataset ?? '')}`),
    el('p', {}, `${ans.impact.length} columns in ${datasets.size} tables downstream, within ${ans.steps} steps${ans.truncated ? ' (cut at the size limit: more lie beyond)' : ''}.`),
    el('div', { class: 'actions' }, el('a', { class: 'button', href: a.csv(from), download: 'colline-impact.csv' }, 'Export CSV'),
      button('Draw downstream', () => a.lineage({ ...from, dir: 'down' }))),
    el('table', { class: 'impact' }, el('tr', {}, el('th', {}, 'distance'), el('th', {}, 'table'), el('th', {}, 'column'), el('th', {}, 'via jobs')),
      ...ans.impact.map((x) => el('tr', { 'data-column': x.key }, el('td', {}, `${x.distance}`), el('td', {}, short(x.dataset)), el('td', {}, visible(x.column)),
        el('td', {}, ...x.jobs.flatMap((j, i) => [i > 0 ? ', ' : '', jobLink(j, a)]))))),
  );
}

/** One statement's outcome: where its tables' schemas came from, what was inferred, what could not be. */
function statement(st: SQLStatement): HTMLElement {
  const where = `statement ${st.index} (line ${st.line})`;
  const p = el('div', { class: `statement outcome-${st.outcome}`, 'data-index': String(st.index), 'data-outcome': st.outcome });
  if (st.outcome === 'tableLevel') {
    p.append(el('p', { class: 'warn' }, `${where}: table-level lineage only: reads ${(st.reads ?? []).map(short).join(', ') || 'nothing'}, writes ${(st.writes ?? []).map(short).join(', ') || 'nothing'}`),
      list(st.cannotInfer ?? [], (r) => visible(r)));
  }
  const sources = (st.tables ?? []).filter((t) => t.source !== 'inferred').map((t) => `${short(t.key)} (${t.source})`);
  if (sources.length) p.append(el('p', { class: 'muted' }, `${where} reads ${sources.join(', ')}`));
  for (const t of st.inferred ?? []) {
    p.append(el('p', { class: 'inferred', 'data-table': t.key }, `${where}: ${short(t.key)} inferred: ${(t.columns ?? []).map((c) => `${visible(c.name)} ${visible(c.type)}`).join(', ') || 'no column'}`));
  }
  return p;
}

/** The SQL panel: Spark SQL or HiveQL through colline analyze, or plan events pasted as they are. */
export function sql(panel: HTMLElement, cfg: Config, a: Actions) {
  clear(panel);
  const text = el('textarea', { id: 'sql-text', rows: '12', spellcheck: 'false', placeholder: 'INSERT INTO shop.top_countries SELECT country, revenue FROM shop.country_revenue WHERE revenue > 100' });
  const dialect = el('select', { id: 'sql-dialect' }, el('option', { value: 'spark' }, 'Spark SQL'), el('option', { value: 'hive' }, 'HiveQL'));
  const events = el('textarea', { id: 'events-text', rows: '8', spellcheck: 'false', placeholder: 'plan events: what the listener writes with spark.colline.output.dir, one JSON value after another' });
  const out = el('div', { id: 'sql-result' });
  const run = async (f: () => Promise<Preview>) => {
    clear(out);
    out.append(el('p', { class: 'muted' }, 'analyzing…'));
    try {
      const p = await f();
      clear(out);
      for (const ev of p.events) {
        out.append(el('p', { class: ev.error ? 'error' : '' }, ev.error ? `statement ${ev.index}: ${visible(ev.error)} (${ev.reason})` : `statement ${ev.index}: job ${short(ev.job ?? '')} writes ${(ev.writes ?? []).map(short).join(', ') || 'nothing'}`));
      }
      for (const st of p.statements ?? []) out.append(statement(st));
      a.preview(p);
    } catch (err) {
      clear(out);
      const e = err as APIError;
      const msg = el('p', { class: 'error', id: 'sql-error' }, e.message);
      out.append(msg);
      if (e.line) {
        // the statement Spark or the analyzer refused, at its line and column in the text
        msg.dataset.line = String(e.line);
        msg.dataset.column = String(e.column ?? 1);
        const lines = text.value.split('\n');
        const col = Math.max(1, e.column ?? 1);
        out.append(el('pre', { class: 'sql-at', id: 'sql-at' }, `${e.line} | ${lines[e.line - 1] ?? ''}\n${' '.repeat(String(e.line).length)} | ${' '.repeat(col - 1)}^`));
        const offset = lines.slice(0, e.line - 1).reduce((n, l) => n + l.length + 1, 0) + col - 1;
        text.focus();
        text.setSelectionRange(offset, Math.min(text.value.length, offset + Math.max(1, (lines[e.line - 1] ?? '').length - col + 1)));
      }
    }
  };
  const sqlButton = button('Draw SQL', () => run(() => api.sql(text.value, dialect.value)), { id: 'sql-draw' });
  if (!cfg.analyzer) sqlButton.disabled = true;
  panel.append(
    el('h2', {}, 'SQL panel'),
    el('p', {}, 'See the lineage of a statement before it runs, drawn with what the graph already knows: new columns and edges are marked, and the graph downstream of what it writes is shown. Tables the graph holds need no setup; a table nobody described gets the columns the SQL uses (dashed: inferred).'),
    el('label', { for: 'sql-text' }, 'Spark SQL or HiveQL'), text, el('div', { class: 'actions' }, dialect, sqlButton),
    cfg.analyzer ? '' : el('p', { class: 'note', id: 'sql-needs-analyze' }, 'This explorer is not connected to colline analyze (COLLINE_UI_ANALYZER_URL), which turns SQL into plan events without running it. Plan events can be drawn below.'),
    el('label', { for: 'events-text' }, 'or plan events (JSON)'), events,
    el('div', { class: 'actions' }, button('Draw events', () => run(() => api.preview(events.value)), { id: 'events-draw' })),
    out,
  );
}
