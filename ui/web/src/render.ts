// Draws a layout into the page's SVG: table boxes with a row per involved column, links styled
// by kind, type and subtype (classes the style sheet colours), stale links greyed; pan and zoom
// with the mouse, wheel and keyboard; fit to the window.
import { clear, short, svg, visible } from './dom';
import { HEADER, ROW, type Layout, type Placed } from './layout';
import type { ColumnTags, Hop } from './api';
import type { Box, Link } from './model';

export interface Handlers {
  column(key: string): void;
  box(key: string): void;
  link(link: Link): void;
  expand(box: Box, dir: 'up' | 'down'): void;
  collapse(box: Box): void;
}

const CHAR = 7;

function cut(s: string, px: number): string {
  const n = Math.max(4, Math.floor(px / CHAR));
  return s.length > n ? s.slice(0, n - 1) + '…' : s;
}

/** An orthogonal polyline with rounded corners. */
function path(points: { x: number; y: number }[]): string {
  if (points.length < 2) return '';
  const r = 6;
  let d = `M${points[0].x},${points[0].y}`;
  for (let i = 1; i < points.length - 1; i++) {
    const p = points[i - 1], q = points[i], n = points[i + 1];
    const a = Math.min(r, Math.hypot(q.x - p.x, q.y - p.y) / 2), b = Math.min(r, Math.hypot(n.x - q.x, n.y - q.y) / 2);
    const ux = Math.sign(q.x - p.x), uy = Math.sign(q.y - p.y), vx = Math.sign(n.x - q.x), vy = Math.sign(n.y - q.y);
    d += ` L${q.x - ux * a},${q.y - uy * a} Q${q.x},${q.y} ${q.x + vx * b},${q.y + vy * b}`;
  }
  const last = points[points.length - 1];
  return d + ` L${last.x},${last.y}`;
}

function describe(l: Link): string {
  const jobs = l.edges.map((e) => short(e.job)).join(', ');
  const roles = [...new Set(l.edges.flatMap((e) => e.roles.map((r) => `${r.type}/${r.subtype}`)))].join(', ');
  const to = l.kind === 'FEEDS' ? short(l.target) : `${short(l.target)} (rows)`;
  return `${short(l.source)} → ${to}\n${roles}\njob: ${jobs}${l.stale ? '\nstale: a later run of the job did not confirm it' : ''}`;
}

export class Drawing {
  private k = 1;
  private x = 0;
  private y = 0;
  private current: Layout | null = null;
  private linksByColumn = new Map<string, SVGGElement[]>();
  private linkOf = new WeakMap<Element, Link>();

  constructor(private readonly root: SVGSVGElement, private readonly view: SVGGElement, private readonly on: Handlers) {
    this.defs();
    root.addEventListener('wheel', (e) => {
      e.preventDefault();
      const r = root.getBoundingClientRect();
      this.zoomAt(Math.exp(-e.deltaY * 0.0015), e.clientX - r.left, e.clientY - r.top);
    }, { passive: false });
    let drag: { x: number; y: number; id: number } | null = null;
    root.addEventListener('pointerdown', (e) => {
      if ((e.target as Element).closest('.box, .link')) return;
      drag = { x: e.clientX, y: e.clientY, id: e.pointerId };
      root.setPointerCapture(e.pointerId);
      root.classList.add('panning');
    });
    root.addEventListener('pointermove', (e) => {
      if (!drag || e.pointerId !== drag.id) return;
      this.pan(e.clientX - drag.x, e.clientY - drag.y);
      drag = { ...drag, x: e.clientX, y: e.clientY };
    });
    const end = () => {
      drag = null;
      root.classList.remove('panning');
    };
    root.addEventListener('pointerup', end);
    root.addEventListener('pointercancel', end);
    // One listener of each kind for the whole drawing, not one per element: a drawing of 500
    // columns and 2,000 links would otherwise add thousands.
    root.addEventListener('click', (e) => this.click(e.target as Element));
    root.addEventListener('mouseover', (e) => {
      this.hoverRow(e, true);
      this.titleLink((e.target as Element).closest('.link'));
    });
    root.addEventListener('mouseout', (e) => this.hoverRow(e, false));
    root.addEventListener('keydown', (e) => {
      const b = this.boxOf((e.target as Element).closest('.box'));
      if (!b) return;
      const k = e.key;
      if (k === 'Enter') this.on.box(b.key);
      else if (k === '[') this.on.expand(b, 'up');
      else if (k === ']') this.on.expand(b, 'down');
      else if (k === 'c') this.on.collapse(b);
      else return;
      e.preventDefault();
      e.stopPropagation();
    });
  }

  private boxOf(g: Element | null): Box | undefined {
    const key = (g as SVGGElement | null)?.dataset.dataset;
    return key === undefined ? undefined : this.current?.boxes.get(key)?.box;
  }

  private click(t: Element) {
    const btn = t.closest('.btn'), link = t.closest('.link'), row = t.closest('.row');
    const b = this.boxOf(t.closest('.box'));
    if (btn && b) {
      const action = (btn as SVGGElement).dataset.action;
      if (action === 'collapse') this.on.collapse(b);
      else this.on.expand(b, action === 'down' ? 'down' : 'up');
    } else if (link && this.linkOf.has(link)) this.on.link(this.linkOf.get(link)!);
    else if (row) this.on.column((row as SVGGElement).dataset.column!);
    else if (b && t.closest('.head, .title')) this.on.box(b.key);
  }

  /** Gives a link its tooltip when the pointer first reaches it (2,000 links need not all have one). */
  private titleLink(g: Element | null) {
    const l = g && this.linkOf.get(g);
    if (l && !g.querySelector('title')) g.prepend(svg('title', {}, visible(describe(l))));
  }

  private hoverRow(e: MouseEvent, on: boolean) {
    const row = (e.target as Element).closest('.row');
    if (row && !row.contains(e.relatedTarget as Node | null)) this.hover((row as SVGGElement).dataset.column!, on);
  }

  private defs() {
    const defs = svg('defs');
    for (const name of ['direct', 'indirect', 'rows', 'stale', 'preview']) {
      defs.append(svg('marker', { id: `arrow-${name}`, viewBox: '0 0 10 10', refX: 9, refY: 5, markerWidth: 9, markerHeight: 9, markerUnits: 'userSpaceOnUse', orient: 'auto-start-reverse', class: `arrow arrow-${name}` },
        svg('path', { d: 'M0,1 L9,5 L0,9 z' })));
    }
    this.root.prepend(defs);
  }

  private apply() {
    this.view.setAttribute('transform', `translate(${this.x},${this.y}) scale(${this.k})`);
  }

  pan(dx: number, dy: number) {
    this.x += dx;
    this.y += dy;
    this.apply();
  }

  zoomAt(f: number, cx?: number, cy?: number) {
    const r = this.root.getBoundingClientRect();
    cx ??= r.width / 2;
    cy ??= r.height / 2;
    const k = Math.min(4, Math.max(0.05, this.k * f));
    this.x = cx - ((cx - this.x) * k) / this.k;
    this.y = cy - ((cy - this.y) * k) / this.k;
    this.k = k;
    this.apply();
  }

  fit() {
    if (!this.current) return;
    const r = this.root.getBoundingClientRect();
    const { width, height } = this.current;
    if (width <= 0 || height <= 0 || r.width <= 0) return;
    this.k = Math.min(1, (r.width - 20) / width, (r.height - 20) / height);
    this.x = (r.width - width * this.k) / 2;
    this.y = Math.max(10, (r.height - height * this.k) / 2);
    this.apply();
  }

  clear() {
    clear(this.view);
    this.current = null;
  }

  draw(l: Layout) {
    clear(this.view);
    this.current = l;
    this.linksByColumn.clear();
    const links = svg('g', { class: 'links' });
    const boxes = svg('g', { class: 'boxes' });
    for (const r of l.links) links.append(this.link(r.link, r.points));
    for (const p of l.boxes.values()) boxes.append(this.box(p));
    this.view.append(links, boxes);
  }

  private link(l: Link, points: { x: number; y: number }[]): SVGGElement {
    const kind = l.kind === 'FEEDS' ? 'feeds' : 'rows';
    const marker = l.preview ? 'preview' : l.stale ? 'stale' : l.kind === 'DECIDES_ROWS' ? 'rows' : l.type === 'DIRECT' ? 'direct' : 'indirect';
    const cls = ['link', `kind-${kind}`, `type-${l.type.toLowerCase()}`, `sub-${l.subtype.toLowerCase()}`];
    if (l.stale) cls.push('stale');
    if (l.masked) cls.push('masked');
    if (l.partial) cls.push('partial');
    if (l.preview) cls.push('preview');
    const d = path(points);
    const g = svg('g', {
      class: cls.join(' '), 'data-kind': l.kind, 'data-source': l.source, 'data-target': l.target,
      'data-type': l.type, 'data-subtype': l.subtype, 'data-jobs': l.edges.map((e) => e.job).join(' '),
    }, svg('path', { class: 'hit', d }), svg('path', { class: 'line', d, 'marker-end': `url(#arrow-${marker})` }));
    this.linkOf.set(g, l);
    for (const k of [l.source, l.target]) {
      const list = this.linksByColumn.get(k) ?? [];
      list.push(g);
      this.linksByColumn.set(k, list);
    }
    return g;
  }

  private box(p: Placed): SVGGElement {
    const b = p.box;
    const cls = ['box'];
    if (b.root) cls.push('root');
    if (b.fresh) cls.push('fresh');
    if (b.collapsed) cls.push('collapsed');
    if (b.inferred) cls.push('inferred');
    if (b.dataset.droppedAt && (!b.dataset.lastSeen || b.dataset.droppedAt > b.dataset.lastSeen)) cls.push('dropped');
    const name = visible(b.dataset.name || short(b.key));
    const g = svg('g', {
      class: cls.join(' '), 'data-dataset': b.key, transform: `translate(${p.x},${p.y})`, tabindex: 0, role: 'group',
      'aria-label': `table ${name}, ${b.columns.length} columns`,
    });
    g.append(
      svg('rect', { class: 'frame', width: p.width, height: p.height, rx: 5 }),
      svg('rect', { class: 'head', width: p.width, height: HEADER, rx: 5 }),
      svg('text', { class: 'title', x: 10, y: 19 }, cut(name, (p.width - 92) * 0.88)),
      svg('title', {}, `${visible(b.key)}${b.dataset.kind ? ` (${b.dataset.kind})` : ''}${b.fresh ? '\nnot in the graph yet' : ''}` +
        `${b.inferred ? '\nschema inferred from the SQL: nobody described this table' : ''}`),
    );
    if (b.inferred) g.append(svg('text', { class: 'badge-inferred', x: 10, y: HEADER + ROW * (b.collapsed ? 0 : b.columns.length) + 12 }, 'inferred schema'));
    const buttons: [string, string, string][] = [
      ['up', '◀', 'one more step upstream from this table ([)'],
      ['collapse', b.collapsed ? '▸' : '▾', b.collapsed ? 'show the columns (c)' : 'collapse to the table (c)'],
      ['down', '▶', 'one more step downstream from this table (])'],
    ];
    buttons.forEach(([action, glyph, title], i) => {
      g.append(svg('g', { class: `btn btn-${action}`, 'data-action': action, transform: `translate(${p.width - 78 + i * 24},5)`, role: 'button', 'aria-label': title },
        svg('rect', { width: 20, height: 20, rx: 3 }), svg('text', { x: 10, y: 14, 'text-anchor': 'middle' }, glyph), svg('title', {}, title)));
    });
    if (!b.collapsed) {
      b.columns.forEach((c, i) => {
        const rc = ['row'];
        if (b.fresh) rc.push('fresh');
        if (b.inferred) rc.push('inferred');
        g.append(svg('g', { class: rc.join(' '), 'data-column': c.key, transform: `translate(0,${HEADER + ROW * i})` },
          svg('rect', { width: p.width, height: ROW }),
          svg('text', { class: 'name', x: 10, y: 14 }, cut(visible(c.name), p.width - 20 - Math.min(16, (c.dataType ?? '').length) * 6)),
          svg('text', { class: 'type', x: p.width - 8, y: 14, 'text-anchor': 'end' }, cut(visible(c.dataType ?? ''), 112)),
          svg('title', {}, `${visible(c.name)}${c.dataType ? ': ' + visible(c.dataType) : ''}\n${visible(c.key)}\ndistance ${c.distance}`)));
      });
    }
    return g;
  }

  private hover(col: string, on: boolean) {
    for (const g of this.linksByColumn.get(col) ?? []) g.classList.toggle('hl', on);
  }

  /** Marks a column's row and its links as selected (nothing: clear). */
  select(col?: string) {
    this.root.querySelectorAll('.sel').forEach((e) => e.classList.remove('sel'));
    if (!col) return;
    this.root.querySelectorAll(`.row[data-column="${CSS.escape(col)}"]`).forEach((e) => e.classList.add('sel'));
    for (const g of this.linksByColumn.get(col) ?? []) g.classList.add('sel');
  }

  /**
   * Puts tag badges on the rows of the columns that tags reach: a filled badge per key the column
   * carries (unmasked), an outlined one per key it receives only masked or aggregated. A row with
   * badges shows them instead of its type (the tooltip keeps the type).
   */
  setTags(byColumn: Map<string, ColumnTags>) {
    this.root.querySelectorAll('.row .tags').forEach((e) => e.remove());
    this.root.querySelectorAll('.row.tagged').forEach((e) => e.classList.remove('tagged'));
    for (const row of this.root.querySelectorAll<SVGGElement>('.row')) {
      const ct = byColumn.get(row.dataset.column!);
      if (!ct || ct.tags.length === 0) continue;
      const keys = new Map<string, string>(); // key → its best status (tags come best first)
      for (const c of ct.tags) if (!keys.has(c.tag.key)) keys.set(c.tag.key, c.status);
      const width = Number(row.querySelector('rect')?.getAttribute('width') ?? 0);
      const g = svg('g', { class: 'tags' });
      let x = width - 6;
      for (const [key, st] of [...keys].slice(0, 3)) {
        const label = visible(cut(key, 70)) + (st === 'unmasked' ? '' : ' ⊘');
        const w = label.length * 6 + 10;
        x -= w + 3;
        g.append(svg('g', { class: `tag tag-${st}`, 'data-tag': key, transform: `translate(${x},3)` },
          svg('rect', { width: w, height: 14, rx: 7 }), svg('text', { x: w / 2, y: 11, 'text-anchor': 'middle' }, label),
          svg('title', {}, `${visible(key)}: ${st}${st === 'unmasked' ? '' : ' (stops here)'}; click the column for the path`)));
      }
      row.classList.add('tagged');
      row.append(g);
    }
  }

  /** Highlights a tag's path: the links of its hops and the rows of its columns that the drawing has (none: clear). Returns the hops drawn. */
  highlightPath(path?: Hop[]): number {
    this.root.querySelectorAll('.tagpath').forEach((e) => e.classList.remove('tagpath'));
    let drawn = 0;
    for (const h of path ?? []) {
      const sel = h.kind === 'FEEDS' ? `.link[data-kind="FEEDS"][data-source="${CSS.escape(h.from)}"][data-target="${CSS.escape(h.to)}"]` : '';
      const links = sel ? this.root.querySelectorAll(sel) : [];
      links.forEach((e) => e.classList.add('tagpath'));
      if (links.length > 0) drawn++;
      for (const k of [h.from, h.to]) this.root.querySelectorAll(`.row[data-column="${CSS.escape(k)}"]`).forEach((e) => e.classList.add('tagpath'));
    }
    return drawn;
  }

  /** Focuses the box of a dataset (keyboard navigation). */
  focusBox(key: string) {
    (this.root.querySelector(`.box[data-dataset="${CSS.escape(key)}"]`) as SVGGElement | null)?.focus();
  }
}
