// DOM helpers. Names come from Spark plans and may hold anything (quotes, angle brackets, control
// characters): they only ever become text nodes and attribute values, never markup.

type Child = Node | string | null | undefined | false;

/** An HTML element with attributes (set with setAttribute) and children (strings become text). */
export function el<K extends keyof HTMLElementTagNameMap>(tag: K, attrs: Record<string, string | undefined> = {}, ...children: Child[]): HTMLElementTagNameMap[K] {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) if (v !== undefined) e.setAttribute(k, v);
  append(e, children);
  return e;
}

const NS = 'http://www.w3.org/2000/svg';

/** An SVG element, likewise. */
export function svg<K extends keyof SVGElementTagNameMap>(tag: K, attrs: Record<string, string | number | undefined> = {}, ...children: Child[]): SVGElementTagNameMap[K] {
  const e = document.createElementNS(NS, tag);
  for (const [k, v] of Object.entries(attrs)) if (v !== undefined) e.setAttribute(k, String(v));
  append(e, children);
  return e;
}

function append(e: Element, children: Child[]) {
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue;
    e.append(typeof c === 'string' ? document.createTextNode(c) : c);
  }
}

/** Shows control and format characters of a name escaped, as colline explain does. */
export function visible(s: string): string {
  return s.replace(/[\u0000-\u001f\u007f-\u009f\u200b-\u200f\u202a-\u202e\u2066-\u2069\ufeff]/g, (c) => {
    const n = c.charCodeAt(0);
    if (c === '\n') return '\\n';
    if (c === '\t') return '\\t';
    if (c === '\r') return '\\r';
    return n < 0x100 ? '\\x' + n.toString(16).padStart(2, '0') : '\\u' + n.toString(16).padStart(4, '0');
  });
}

/** The short name of a key: the catalog prefix dropped (spark_catalog/shop.orders → shop.orders). */
export function short(key: string): string {
  return visible(key.replace(/^spark_catalog\//, ''));
}

/** A time as the page shows it: date and time to the second, UTC. */
export function when(t?: string): string {
  if (!t) return '–';
  return t.replace('T', ' ').replace(/\.\d+Z$/, 'Z').replace(/Z$/, ' UTC');
}

export function clear(e: Element) {
  while (e.firstChild) e.firstChild.remove();
}
