// The explorer's JSON API (ui/api.go): typed requests and answers.

export type Direction = 'up' | 'down';

export interface Dataset {
  key: string;
  namespace: string;
  name: string;
  kind: string;
  location?: string;
  firstSeen?: string;
  lastSeen?: string;
  droppedAt?: string;
}

export interface Column {
  key: string;
  name: string;
  dataset: string;
  dataType?: string;
  firstSeen?: string;
  lastSeen?: string;
  distance: number;
}

export interface Role {
  type: string;
  subtype: string;
  expr?: string;
  masked?: boolean;
  rows?: string[]; // DECIDES_ROWS: decides only the rows that come from these datasets (some UNION branches); absent: every row
}

export interface Edge {
  kind: 'FEEDS' | 'DECIDES_ROWS';
  source: string;
  target: string; // a column key (FEEDS) or a dataset key (DECIDES_ROWS)
  job: string;
  roles: Role[];
  type?: string;
  subtype?: string;
  firstSeen?: string;
  lastSeen?: string;
  lastRun?: string;
  stale?: boolean;
}

export interface Subgraph {
  datasets: Dataset[];
  columns: Column[];
  edges: Edge[];
  steps: number;
  truncated: boolean;
  complete: boolean;
  from: string[] | null;
  direction: Direction | '';
  askedSteps: number;
  maxColumns: number;
  maxEdges: number;
  asOf?: string;
}

export interface Hit {
  kind: 'column' | 'dataset' | 'job';
  key: string;
  name: string;
  dataset?: string;
  match: 'exact' | 'prefix' | 'substring';
}

export interface SearchAnswer {
  query: string;
  hits: Hit[];
}

export interface Config {
  version: string;
  user: string;
  analyzer: boolean;
  maxSteps: number;
  maxColumns: number;
  maxEdges: number;
  defaultSteps: number;
}

export interface ColumnDetail extends Column {
  datasetInfo: Dataset;
  writers: string[];
}

export interface DatasetDetail extends Dataset {
  columns: Column[];
  writers: string[];
  readers: string[];
}

export interface Run {
  key: string;
  job: string;
  appId: string;
  executionId: number;
  funcName?: string;
  status: string;
  sparkVersion?: string;
  endedAt?: string;
  emittedAt?: string;
  reads: string[];
  writes: string[];
  parent?: RunRef;
  connect?: RunConnect;
}

/** A run and its job. */
export interface RunRef {
  key: string;
  job: string;
}

/** The Spark Connect operation of a run; the user id is what the client sent (not authenticated). */
export interface RunConnect {
  userId: string;
  userName?: string;
  sessionId: string;
  operationId?: string;
  clientType?: string;
}

/** GET /api/runs: the runs of a Spark application (app) or under a scheduler's run (parent). */
export interface RunSet {
  app?: string;
  parent?: RunRef;
  runs: Run[];
  truncated: boolean;
  reads: string[];
  writes: string[];
  edges: Edge[];
}

export interface Access {
  dataset: string;
  runs: number;
  last?: string;
}

export interface JobDetail {
  key: string;
  namespace: string;
  name: string;
  firstSeen?: string;
  lastSeen?: string;
  runCount: number;
  statuses: Record<string, number>;
  runs: Run[];
  reads: Access[];
  writes: Access[];
}

export interface Impacted {
  dataset: string;
  column: string;
  key: string;
  distance: number;
  jobs: string[];
}

export interface ImpactAnswer {
  from: string[];
  steps: number;
  truncated: boolean;
  complete: boolean;
  impact: Impacted[];
}

export interface PreviewEvent {
  index: number;
  job?: string;
  writes?: string[];
  error?: string;
  reason?: string;
}

export interface SQLColumn {
  name: string;
  type: string;
}

/** A table a statement names: its key, where its schema came from (ddl, graph, script, inferred, view, ...). */
export interface SQLTable {
  key: string;
  source: string;
  columns?: SQLColumn[]; // an inferred table's columns
}

/** What became of one statement of the SQL panel. */
export interface SQLStatement {
  index: number;
  line: number;
  column: number;
  outcome: string; // event, skipped, tableLevel, ...
  reason?: string;
  tables?: SQLTable[];
  inferred?: SQLTable[];
  cannotInfer?: string[]; // tableLevel: each name that cannot be inferred, and why
  reads?: string[];
  writes?: string[];
}

export interface Preview {
  events: PreviewEvent[];
  lineage: Subgraph;
  downstream?: Subgraph;
  known: string[];
  statements?: SQLStatement[];
}

// Tags (docs/tags.md): where tagged data goes, each answer with its paths.

export type TagStatus = 'unmasked' | 'aggregated' | 'masked';

export interface Tag {
  key: string;
  value: string;
  source: string;
}

export interface TagPolicy {
  key: string;
  aggregation: string; // pass or stop
  allowed?: string[];
  description?: string;
  source?: string;
}

export interface Tagged {
  column: string;
  dataset: string;
  tags: Tag[];
}

/** One step of a tag's path, the way data flows (FIELD, PARENT: a struct and its field). */
export interface Hop {
  kind: 'FEEDS' | 'DECIDES_ROWS' | 'FIELD' | 'PARENT';
  from: string;
  to: string;
  fromDataset: string;
  toDataset: string;
  job?: string;
  roles?: Role[];
}

export interface Arrival {
  from: string;
  tags: Tag[];
  status: TagStatus;
  hops: number;
  path?: Hop[]; // paths=true
  via?: Hop; // the path's last hop (the default, compact answer)
}

export interface Reached {
  column: string;
  dataset: string;
  status: TagStatus;
  allowed: boolean;
  arrivals: Arrival[];
}

export interface DatasetReach {
  dataset: string;
  unmasked: number;
  aggregated: number;
  masked: number;
  allowed: boolean;
  source: boolean;
}

export interface TagUse {
  kind: 'rows' | 'value';
  from: string;
  via: string;
  target: string;
  dataset: string;
  job: string;
  roles: Role[];
}

export interface DatasetCount extends DatasetReach {
  uses: number;
}

/** A tag's reach per dataset (GET /api/tags/reach?tag=K): no column; a dataset's are tagReachIn's. */
export interface DatasetsAnswer {
  tag: string;
  policy: TagPolicy;
  sources: Tagged[];
  datasets: DatasetCount[];
  columns: number;
  indirect: number;
  truncated: boolean;
}

export interface ReachAnswer {
  tag: string;
  policy: TagPolicy;
  sources: Tagged[];
  columns: Reached[];
  datasets: DatasetReach[];
  indirect: TagUse[];
  truncated: boolean;
}

export interface Carried {
  tag: Tag;
  from: string;
  status: TagStatus;
  path: Hop[];
}

export interface ColumnTags {
  column: string;
  dataset: string;
  tags: Carried[];
  truncated: boolean;
}

export interface ColumnTagsAnswer {
  columns: ColumnTags[];
}

export interface TagSummary {
  key: string;
  policy: TagPolicy;
  sources: Record<string, number>;
  rules: number;
}

export interface TagListAnswer {
  tags: TagSummary[];
}

/** An answer other than 2xx, with the server's message. */
export class APIError extends Error {
  constructor(readonly status: number, message: string, readonly line?: number, readonly column?: number) {
    super(message);
  }
}

async function answer<T>(r: Response): Promise<T> {
  if (!r.ok) {
    let msg = `${r.status} ${r.statusText}`;
    let line: number | undefined, column: number | undefined;
    try {
      const body = (await r.json()) as { error?: string; line?: number; column?: number };
      if (body.error) msg = body.error;
      line = body.line;
      column = body.column;
    } catch {
      // not JSON: keep the status line
    }
    throw new APIError(r.status, msg, line, column);
  }
  return (await r.json()) as T;
}

/** The query string of params; arrays repeat their name. */
export function query(params: Record<string, string | number | string[] | undefined>): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) {
    if (v === undefined || v === '') continue;
    if (Array.isArray(v)) v.forEach((x) => q.append(k, x));
    else q.set(k, String(v));
  }
  return q.toString();
}

async function get<T>(path: string, params: Record<string, string | number | string[] | undefined>, signal?: AbortSignal): Promise<T> {
  return answer<T>(await fetch(`/api/${path}?${query(params)}`, { signal, headers: { Accept: 'application/json' } }));
}

export const api = {
  config: () => get<Config>('config', {}),
  search: (q: string, signal?: AbortSignal) => get<SearchAnswer>('search', { q, limit: 12 }, signal),
  lineage: (p: { column?: string[]; dataset?: string; dir: Direction; steps: number; asOf?: string }) =>
    get<Subgraph>('lineage', { column: p.column, dataset: p.dataset, dir: p.dir, steps: p.steps, asOf: p.asOf }),
  impact: (p: { column?: string; dataset?: string; asOf?: string }) => get<ImpactAnswer>('impact', { column: p.column, dataset: p.dataset, asOf: p.asOf }),
  impactCSV: (p: { column?: string; dataset?: string; asOf?: string }) => `/api/impact?${query({ column: p.column, dataset: p.dataset, asOf: p.asOf, format: 'csv' })}`,
  column: (key: string) => get<ColumnDetail>('column', { key }),
  dataset: (key: string) => get<DatasetDetail>('dataset', { key }),
  job: (key: string) => get<JobDetail>('job', { key, runs: 50 }),
  run: (key: string) => get<Run>('run', { key }),
  tags: () => get<TagListAnswer>('tags', {}),
  tagReach: (tag: string) => get<DatasetsAnswer>('tags/reach', { tag }),
  tagReachIn: (tag: string, dataset: string) => get<ReachAnswer>('tags/reach', { tag, dataset }),
  // the full report: every column it reaches, with whole paths in the CSV
  tagReachURL: (tag: string, format: 'csv' | 'json') => `/api/tags/reach?${query({ tag, format, report: format === 'json' ? 'full' : undefined })}`,
  tagsOf: (column: string[]) => get<ColumnTagsAnswer>('tags/columns', { column }),
  runs: (p: { app?: string; parent?: string; limit?: number }) => get<RunSet>('runs', { app: p.app, parent: p.parent, limit: p.limit }),
  preview: async (events: string) => answer<Preview>(await fetch('/api/preview', { method: 'POST', body: events, headers: { 'Content-Type': 'application/json' } })),
  sql: async (sql: string, dialect: string) =>
    answer<Preview>(await fetch('/api/sql', { method: 'POST', body: JSON.stringify({ sql, dialect }), headers: { 'Content-Type': 'application/json' } })),
};
