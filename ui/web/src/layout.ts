// Layout with elkjs, the one layout library: ELK's layered algorithm (a Sugiyama layout made for
// data-flow diagrams with ports) places the table boxes in layers from left to right in the
// direction data flows, and routes every link between ports on the boxes' sides: one port pair
// per column row (in on the west side, out on the east), and one on the header for the
// row-level dependencies (DECIDES_ROWS end at the table) and for collapsed boxes. It runs in
// ELK's web worker, so the page stays responsive while a large drawing is laid out.
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

/** Starts ELK's worker (a large script) while the page waits for its first answer. */
export function warmUp(): Promise<unknown> {
  return engine().layout({ id: 'warm-up', children: [] });
}

const inPort = (col: string) => `${col}\u0000in`;
const outPort = (col: string) => `${col}\u0000out`;
const headIn = (ds: string) => `${ds}\u0000head-in`;
const headOut = (ds: string) => `${ds}\u0000head-out`;

/** Lays out boxes and links; link ends on collapsed boxes move to the header. */
export async function layout(boxes: Box[], links: Link[]): Promise<Layout> {
  const colBox = new Map<string, Box>();
  const boxOf = new Map<string, Box>();
  for (const b of boxes) {
    boxOf.set(b.key, b);
    for (const c of b.columns) colBox.set(c.key, b);
  }
  const children: ElkNode[] = boxes.map((b) => {
    const width = boxWidth(b);
    const height = b.collapsed ? HEADER : HEADER + ROW * b.columns.length + 4;
    const ports: ElkPort[] = [
      { id: headIn(b.key), width: 1, height: 1, x: -1, y: HEADER / 2, layoutOptions: { 'elk.port.side': 'WEST' } },
      { id: headOut(b.key), width: 1, height: 1, x: width, y: HEADER / 2, layoutOptions: { 'elk.port.side': 'EAST' } },
    ];
    if (!b.collapsed) {
      b.columns.forEach((c, i) => {
        const y = HEADER + ROW * i + ROW / 2;
        ports.push({ id: inPort(c.key), width: 1, height: 1, x: -1, y, layoutOptions: { 'elk.port.side': 'WEST' } });
        ports.push({ id: outPort(c.key), width: 1, height: 1, x: width, y, layoutOptions: { 'elk.port.side': 'EAST' } });
      });
    }
    return { id: b.key, width, height, ports, layoutOptions: { 'elk.portConstraints': 'FIXED_POS' } };
  });
  const edges: ElkExtendedEdge[] = [];
  const byId = new Map<string, Link>();
  for (const l of links) {
    const sb = colBox.get(l.source);
    const tb = l.kind === 'FEEDS' ? colBox.get(l.target) : boxOf.get(l.target);
    if (!sb || !tb) continue;
    const src = sb.collapsed ? headOut(sb.key) : outPort(l.source);
    const dst = l.kind === 'DECIDES_ROWS' || tb.collapsed ? headIn(tb.key) : inPort(l.target);
    byId.set(l.id, l);
    edges.push({ id: l.id, sources: [src], targets: [dst] });
  }
  const graph: ElkNode = {
    id: 'root',
    layoutOptions: {
      'elk.algorithm': 'layered',
      'elk.direction': 'RIGHT',
      'elk.edgeRouting': 'ORTHOGONAL',
      'elk.spacing.nodeNode': '28',
      'elk.layered.spacing.nodeNodeBetweenLayers': '90',
      'elk.layered.spacing.edgeNodeBetweenLayers': '14',
      'elk.spacing.edgeEdge': '6',
      'elk.layered.thoroughness': '2',
      'elk.layered.crossingMinimization.greedySwitch.type': 'OFF',
      'elk.layered.nodePlacement.strategy': 'BRANDES_KOEPF',
      'elk.layered.mergeEdges': 'false',
      'elk.padding': '[top=20,left=20,bottom=20,right=20]',
    },
    children,
    edges,
  };
  const res = await engine().layout(graph);
  const placed = new Map<string, Placed>();
  for (const n of res.children ?? []) {
    const box = boxOf.get(n.id)!;
    const rows = new Map<string, number>();
    if (!box.collapsed) box.columns.forEach((c, i) => rows.set(c.key, HEADER + ROW * i + ROW / 2));
    placed.set(n.id, { box, x: n.x ?? 0, y: n.y ?? 0, width: n.width ?? 0, height: n.height ?? 0, rows });
  }
  const routed: Routed[] = [];
  for (const e of res.edges ?? []) {
    const l = byId.get(e.id);
    const s = e.sections?.[0];
    if (!l || !s) continue;
    routed.push({ link: l, points: [s.startPoint, ...(s.bendPoints ?? []), s.endPoint] });
  }
  return { boxes: placed, links: routed, width: res.width ?? 0, height: res.height ?? 0 };
}
