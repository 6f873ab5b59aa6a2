/**
 * The formats a person reads, once for both front ends (the JupyterLab sidebar and the widgets).
 *
 * Why it exists: a size or a time must read the same wherever a person meets it, and be written
 * once. Pure functions of their arguments; they never touch the DOM.
 */

/** How a front end writes a size: its word for bytes, the largest unit, and where decimals stop. */
export interface ISizeStyle {
  /** after a count of whole bytes: 'B' in the widgets, 'bytes' in the sidebar */
  bytes: string;
  /** the largest unit used ('TiB' in the sidebar: larger sizes are counted in it) */
  largest: string;
  /** from this value on (in its unit) the number is rounded whole: 100 in the widgets */
  wholeFrom: number;
}

/** The widgets' sizes: `532 B`, `4.9 KiB`, `16.4 MiB`, `312 GiB`. */
export const WIDGET_SIZES: ISizeStyle = { bytes: 'B', largest: 'PiB', wholeFrom: 100 };

/** The sidebar's sizes: `532 bytes`, `4.9 KiB`, `312.0 GiB`. */
export const SIDEBAR_SIZES: ISizeStyle = { bytes: 'bytes', largest: 'TiB', wholeFrom: Infinity };

const UNITS = ['B', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB'];

/** Bytes as a person reads them, in binary units as file browsers show them; '' for none. */
export function humanSize(bytes: number | null | undefined, style: ISizeStyle = WIDGET_SIZES): string {
  if (bytes === null || bytes === undefined) {
    return '';
  }
  const last = UNITS.indexOf(style.largest);
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < last) {
    value /= 1024;
    unit += 1;
  }
  if (unit === 0) {
    return `${bytes} ${style.bytes}`;
  }
  return `${value < style.wholeFrom ? value.toFixed(1) : Math.round(value)} ${UNITS[unit]}`;
}

/** A count with thousands separators: `50,000`. */
export function formatCount(n: number): string {
  return n.toLocaleString('en-US');
}

/** A count and its noun: `1 file`, `50,000 files`. */
export function plural(n: number, one: string, many: string): string {
  return `${formatCount(n)} ${n === 1 ? one : many}`;
}
