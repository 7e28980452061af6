/**
 * DOM helpers that never parse HTML: every piece of data goes in as textContent or as a
 * plain attribute value, so nothing read from a file or an output can run as script.
 */

const SVG_NS = 'http://www.w3.org/2000/svg';

/** An HTML element with a class and text (as textContent). */
export function el<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  className?: string,
  text?: string
): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  if (className) {
    node.className = className;
  }
  if (text !== undefined) {
    node.textContent = text;
  }
  return node;
}

/** An SVG element with attributes (values set with setAttribute, never parsed). */
export function svg(tag: string, attrs: Record<string, string | number> = {}): SVGElement {
  const node = document.createElementNS(SVG_NS, tag) as SVGElement;
  for (const [k, v] of Object.entries(attrs)) {
    node.setAttribute(k, String(v));
  }
  return node;
}

/** Append children to a node; returns the node. */
export function append<T extends Node>(parent: T, ...children: (Node | null)[]): T {
  for (const c of children) {
    if (c) {
      parent.appendChild(c);
    }
  }
  return parent;
}

/** A plain string of untrusted data (objects are shown as JSON). */
export function str(value: unknown, fallback = ''): string {
  if (value === undefined || value === null) {
    return fallback;
  }
  if (typeof value === 'string') {
    return value;
  }
  if (typeof value === 'number' || typeof value === 'boolean') {
    return String(value);
  }
  try {
    return JSON.stringify(value);
  } catch {
    return fallback;
  }
}

/** A finite number, or NaN. */
export function num(value: unknown): number {
  return typeof value === 'number' && Number.isFinite(value) ? value : NaN;
}

/** `0.123 ms`, `45.6 us`, `1.23 s` (as the Python displays write times). */
export function fmtSeconds(seconds: number): string {
  if (!Number.isFinite(seconds)) {
    return '–';
  }
  if (seconds >= 1) {
    return `${seconds.toPrecision(3)} s`;
  }
  if (seconds >= 1e-3) {
    return `${+(seconds * 1e3).toPrecision(4)} ms`;
  }
  return `${+(seconds * 1e6).toPrecision(4)} us`;
}

/** A number with a few significant digits, `–` for none. */
export function fmtNum(value: number, digits = 4): string {
  return Number.isFinite(value) ? String(+value.toPrecision(digits)) : '–';
}

/** A one-line caption: the parts joined by middle dots. */
export function caption(className: string, parts: string[]): HTMLElement {
  return el('div', className, parts.filter(p => p).join(' · '));
}
