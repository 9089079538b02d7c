// Layout with elkjs, the one layout library: ELK's layered algorithm (a Sugiyama layout made for
// data-flow diagrams with ports) places the table boxes in layers from left to right in the
// direction data flows and routes the links between ports on the boxes' sides, in on the west
// side, out on the east. It routes bundles, not single links: the links from one box to one end of
// another (its column rows, or its header, where row-level dependencies and links to a collapsed
// box end) go as one edge, and each link rides its bundle's route from its source row to its
// target row. A drawing of 500 columns over 2,000 links is so a layout of about a hundred edges
// (docs/ui.md, "How it is built"). It runs in ELK's web worker, so the page stays responsive while
// a large drawing is laid out.
import ELK from 'elkjs/lib/elk-api';
import type { ElkExtendedEdge, ElkNode, ElkPoint, ElkPort } from 'elkjs/lib/elk-api';
import type { Box, Link } from './model';

declare const ELK_WORKER_URL: string; // set by build.mjs

export const HEADER = 30;
export const ROW = 20;
const MIN_WIDTH = 170;
const MAX_WIDTH = 360;
const CHAR = 7; // px per character of 12px text, about

export interface Placed {
  box: Box;
  x: number;
  y: number;
  width: number;
  height: number;
  rows: Map<string, number>; // column key → y of its row's middle, relative to the box
}

export interface Routed {
  link: Link;
  points: ElkPoint[];
}

export interface Layout {
  boxes: Map<string, Placed>;
  links: Routed[];
  width: number;
  height: number;
}

let elk: InstanceType<typeof ELK> | null = null;

function engine(): InstanceType<typeof ELK> {
  elk ??= new ELK({ workerUrl: ELK_WORKER_URL });
  return elk;
}

export function boxWidth(b: Box): number {
  const title = b.dataset.name.length * (CHAR + 1) + 100; // bold title and the three buttons
  const rows = Math.max(0, ...b.columns.map((c) => c.name.length * CHAR + Math.min(16, (c.dataType ?? '').length) * 6 + 44));
  return Math.min(MAX_WIDTH, Math.max(MIN_WIDTH, title, rows));
}

// ELK's options for the drawing, and for the warm-up.
const options: Record<string, string> = {
  'elk.algorithm': 'layered',
  'elk.direction': 'RIGHT',
  'elk.edgeRouting': 'ORTHOGONAL',
  'elk.spacing.nodeNode': '28',
  'elk.layered.spacing.nodeNodeBetweenLayers': '90',
  'elk.layered.spacing.edgeNodeBetweenLayers': '14',
  'elk.spacing.edgeEdge': '6',
  'elk.layered.nodePlacement.strategy': 'NETWORK_SIMPLEX', // compact: Brandes–Köpf staggers tall boxes
  'elk.layered.mergeEdges': 'false',
  'elk.padding': '[top=20,left=20,bottom=20,right=20]',
};
const fixedPorts = { 'elk.portConstraints': 'FIXED_POS' }; // ports where the rows are

/**
 * Starts ELK's worker (a large script) while the page waits for its first answer, and lays out a
 * graph of two boxes and a bundle with the page's options: the first layout compiles the layered
 * algorithm's code, which so happens before the answer is there.
 */
export function warmUp(): Promise<unknown> {
  const port = (id: string, x: number) => ({ id, width: 1, height: 1, x, y: 10 });
  const box = (id: string, p: ElkPort) => ({ id, width: 100, height: 20, ports: [p], layoutOptions: fixedPorts });
  return engine().layout({
    id: 'warm-up', layoutOptions: options,
    children: [box('a', port('ao', 100)), box('b', port('bi', -1))], edges: [{ id: 'e', sources: ['ao'], targets: ['bi'] }],
  });
}

/** The links of one source box to one target end (the target's rows, or its header), routed as one. */
interface Bundle {
  id: string;
  source: Box;
  target: Box;
  toHead: boolean; // ends at the target's header: row-level dependencies, or a collapsed target
  links: Link[];
  sy: number; // its ports' heights in the boxes
  ty: number;
}

const mean = (ys: number[], none: number) => (ys.length ? ys.reduce((a, b) => a + b, 0) / ys.length : none);

/**
 * Lays out boxes and links. ELK places the boxes and routes one edge per bundle (the links from
 * one box to one end of another: its rows, or its header), between ports at the mean height of the
 * rows the bundle joins; each link then rides its bundle's route, leaving its source row and
 * reaching its target row along the route's first and last segments. Link ends on collapsed boxes
 * and row-level dependencies are at the header.
 */
export async function layout(boxes: Box[], links: Link[]): Promise<Layout> {
  const colBox = new Map<string, Box>();
  const boxOf = new Map<string, Box>();
  const rowsOf = new Map<Box, Map<string, number>>();
  for (const b of boxes) {
    boxOf.set(b.key, b);
    const rows = new Map<string, number>();
    b.columns.forEach((c, i) => {
      colBox.set(c.key, b);
      if (!b.collapsed) rows.set(c.key, HEADER + ROW * i + ROW / 2);
    });
    rowsOf.set(b, rows);
  }
  const bundles = new Map<string, Bundle>();
  for (const l of links) {
    const source = colBox.get(l.source);
    const target = l.kind === 'FEEDS' ? colBox.get(l.target) : boxOf.get(l.target);
    if (!source || !target) continue;
    const toHead = l.kind === 'DECIDES_ROWS' || target.collapsed;
    const key = `${source.key}\u0000${target.key}\u0000${toHead}`;
    let bd = bundles.get(key);
    if (!bd) bundles.set(key, (bd = { id: `e${bundles.size}`, source, target, toHead, links: [], sy: 0, ty: 0 }));
    bd.links.push(l);
  }
  // ELK's ids are short: it hashes them often.
  const byNode = new Map<string, Box>(boxes.map((b, i) => [`n${i}`, b]));
  const width = new Map<Box, number>(boxes.map((b) => [b, boxWidth(b)]));
  const ports = new Map<Box, ElkPort[]>(boxes.map((b) => [b, []]));
  const edges: ElkExtendedEdge[] = [];
  const rowY = (b: Box, col: string) => rowsOf.get(b)!.get(col) ?? HEADER / 2;
  for (const bd of bundles.values()) {
    const out = `${bd.id}o`, inn = `${bd.id}i`;
    bd.sy = mean(bd.links.map((l) => rowY(bd.source, l.source)), HEADER / 2);
    bd.ty = bd.toHead ? HEADER / 2 : mean(bd.links.map((l) => rowY(bd.target, l.target)), HEADER / 2);
    ports.get(bd.source)!.push({ id: out, width: 1, height: 1, x: width.get(bd.source)!, y: bd.sy });
    ports.get(bd.target)!.push({ id: inn, width: 1, height: 1, x: -1, y: bd.ty });
    edges.push({ id: bd.id, sources: [out], targets: [inn] });
  }
  const children: ElkNode[] = boxes.map((b, i) => ({
    id: `n${i}`, width: width.get(b)!, height: (b.collapsed ? HEADER : HEADER + ROW * b.columns.length + 4) + (b.inferred ? 14 : 0),
    ports: ports.get(b), layoutOptions: fixedPorts,
  }));
  const graph: ElkNode = {
    id: 'root',
    layoutOptions: options,
    children,
    edges,
  };
  const res = await engine().layout(graph);
  const placed = new Map<string, Placed>();
  for (const n of res.children ?? []) {
    const box = byNode.get(n.id)!;
    placed.set(box.key, { box, x: n.x ?? 0, y: n.y ?? 0, width: n.width ?? 0, height: n.height ?? 0, rows: rowsOf.get(box)! });
  }
  const sections = new Map((res.edges ?? []).map((e) => [e.id, e.sections?.[0]]));
  const routed: Routed[] = [];
  for (const bd of bundles.values()) {
    const s = sections.get(bd.id);
    if (!s) continue;
    for (const l of bd.links) {
      const from = { x: s.startPoint.x, y: s.startPoint.y + rowY(bd.source, l.source) - bd.sy };
      const to = { x: s.endPoint.x, y: s.endPoint.y + (bd.toHead ? 0 : rowY(bd.target, l.target) - bd.ty) };
      routed.push({ link: l, points: ride(s.bendPoints ?? [], from, to) });
    }
  }
  return { boxes: placed, links: routed, width: res.width ?? 0, height: res.height ?? 0 };
}

/**
 * A link's route along its bundle's bends (an orthogonal route from an east port to a west port:
 * its first and last segments are horizontal): the first bend moves to the height of the link's
 * source row, the last to its target row's; a straight bundle gets a step halfway.
 */
function ride(bends: ElkPoint[], from: ElkPoint, to: ElkPoint): ElkPoint[] {
  if (bends.length === 0) {
    if (from.y === to.y) return [from, to];
    const x = (from.x + to.x) / 2;
    return [from, { x, y: from.y }, { x, y: to.y }, to];
  }
  const first = bends[0], last = bends[bends.length - 1];
  if (bends.length === 1) return [from, { x: first.x, y: from.y }, { x: first.x, y: to.y }, to];
  return [from, { x: first.x, y: from.y }, ...bends.slice(1, -1), { x: last.x, y: to.y }, to];
}
