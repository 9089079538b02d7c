// What the page draws: the datasets, columns and lineage relationships of one or more answers
// merged, grouped into table boxes (a dataset and its involved columns) and links (the
// relationships of one kind between one source and one target, over every job).
import type { Column, Dataset, Edge, Subgraph } from './api';

/** A table box: a dataset and the columns of it the drawing involves. */
export interface Box {
  key: string;
  dataset: Dataset;
  columns: Column[]; // by name
  collapsed: boolean;
  root: boolean; // holds a column the view started from
  fresh: boolean; // not in the graph (the SQL panel's preview)
  inferred: boolean; // its schema was inferred from the SQL panel's statements (nobody described it)
}

/** A link: the relationships of one kind from one source column to one target (over jobs). */
export interface Link {
  id: string;
  kind: Edge['kind'];
  source: string; // column key
  target: string; // column key (FEEDS) or dataset key (DECIDES_ROWS)
  edges: Edge[];
  type: string; // the strongest role over its edges
  subtype: string;
  stale: boolean; // every edge is stale
  masked: boolean; // some role masks the value
  partial: boolean; // row-level, and every role decides only the rows of some UNION branches (Role.rows)
  preview: boolean; // from the SQL panel, not (yet) in the graph
}

// plan.Strongest's order.
const strength: Record<string, number> = {
  'DIRECT/AGGREGATION': 9, 'DIRECT/TRANSFORMATION': 8, 'DIRECT/IDENTITY': 7,
  'INDIRECT/CONDITIONAL': 6, 'INDIRECT/WINDOW': 5, 'INDIRECT/JOIN': 4, 'INDIRECT/FILTER': 3, 'INDIRECT/GROUP_BY': 2, 'INDIRECT/SORT': 1,
};

export function strongest(edges: Edge[]): { type: string; subtype: string } {
  let best = { type: '', subtype: '' };
  let score = -1;
  for (const e of edges) {
    for (const r of e.roles ?? []) {
      const s = strength[`${r.type}/${r.subtype}`] ?? 0;
      if (s > score) {
        score = s;
        best = { type: r.type, subtype: r.subtype };
      }
    }
  }
  return best;
}

function edgeId(e: Edge): string {
  return `${e.kind}\u0000${e.source}\u0000${e.target}\u0000${e.job}`;
}

export class Model {
  datasets = new Map<string, Dataset>();
  columns = new Map<string, Column>();
  edges = new Map<string, Edge>();
  previewEdges = new Set<string>();
  roots = new Set<string>();
  collapsed = new Set<string>();
  fresh = new Set<string>(); // dataset and column keys the graph does not hold
  inferred = new Set<string>(); // dataset keys whose schema the SQL panel inferred
  tablesOnly = new Set<string>(); // datasets drawn without columns (a statement with table-level lineage only)
  truncated = false;

  /** Adds an answer; a column keeps the smallest distance it was met at. */
  merge(sg: Subgraph, opts: { preview?: boolean } = {}) {
    for (const d of sg.datasets) if (!this.datasets.has(d.key)) this.datasets.set(d.key, d);
    for (const c of sg.columns) {
      const old = this.columns.get(c.key);
      if (!old || c.distance < old.distance) this.columns.set(c.key, c);
    }
    for (const e of sg.edges) {
      const id = edgeId(e);
      if (opts.preview) this.previewEdges.add(id);
      if (!this.edges.has(id) || opts.preview) this.edges.set(id, e);
    }
    this.truncated = this.truncated || sg.truncated;
  }

  isEmpty(): boolean {
    return this.columns.size === 0 && this.tablesOnly.size === 0;
  }

  boxes(): Box[] {
    const by = new Map<string, Column[]>();
    for (const c of this.columns.values()) {
      const list = by.get(c.dataset) ?? [];
      list.push(c);
      by.set(c.dataset, list);
    }
    for (const key of this.tablesOnly) if (!by.has(key)) by.set(key, []);
    const out: Box[] = [];
    for (const [key, cols] of by) {
      const dataset = this.datasets.get(key) ?? { key, namespace: '', name: key, kind: '' };
      cols.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
      out.push({
        key, dataset, columns: cols, collapsed: this.collapsed.has(key),
        root: cols.some((c) => this.roots.has(c.key)), fresh: this.fresh.has(key), inferred: this.inferred.has(key),
      });
    }
    out.sort((a, b) => (a.key < b.key ? -1 : 1));
    return out;
  }

  links(): Link[] {
    const groups = new Map<string, Edge[]>();
    const preview = new Map<string, boolean>();
    for (const [id, e] of this.edges) {
      if (!this.columns.has(e.source)) continue;
      if (e.kind === 'FEEDS' && !this.columns.has(e.target)) continue;
      if (e.kind === 'DECIDES_ROWS' && !this.datasets.has(e.target)) continue;
      const g = `${e.kind}\u0000${e.source}\u0000${e.target}`;
      const list = groups.get(g) ?? [];
      list.push(e);
      groups.set(g, list);
      if (this.previewEdges.has(id)) preview.set(g, true);
    }
    const out: Link[] = [];
    for (const [id, edges] of groups) {
      edges.sort((a, b) => (a.job < b.job ? -1 : 1));
      const { type, subtype } = strongest(edges);
      out.push({
        id, kind: edges[0].kind, source: edges[0].source, target: edges[0].target, edges, type, subtype,
        stale: edges.every((e) => e.stale), masked: edges.some((e) => e.roles?.some((r) => r.masked)),
        partial: edges[0].kind === 'DECIDES_ROWS' && edges.every((e) => (e.roles ?? []).every((r) => (r.rows ?? []).length > 0)),
        preview: preview.get(id) ?? false,
      });
    }
    return out;
  }
}
