/**
 * Names in the order `String.prototype.localeCompare` puts them (ICU's root collation, Node's default),
 * without its cost when they are printable ASCII: the first localeCompare of a process sets up ICU's
 * collator, about 13 ms of CPU, which every run paid at its end to sort its statement names and server
 * settings. Names with any other character go through localeCompare itself.
 *
 * The rule for ASCII: characters compare by the rank below (punctuation, then digits, then letters, a
 * letter's two cases equal); when every rank is equal the shorter name comes first; when the names differ
 * in case only, the first position where they do decides, lowercase first.
 */
const ORDER = ' _-,;:!?.\'"()[]{}@*/\\&#%`^+<=>|~$0123456789abcdefghijklmnopqrstuvwxyz';
const RANK = new Int16Array(128).fill(-1);
for (let i = 0; i < ORDER.length; i++) RANK[ORDER.charCodeAt(i)] = i;
for (let c = 65; c <= 90; c++) RANK[c] = RANK[c + 32] as number;

function printableAscii(s: string): boolean {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 32 || c > 126) return false;
  }
  return true;
}

/** Compare two names as `a.localeCompare(b)` does (its sign). */
export function byName(a: string, b: string): number {
  if (a === b) return 0;
  if (!printableAscii(a) || !printableAscii(b)) return a.localeCompare(b);
  const n = Math.min(a.length, b.length);
  let caseOrder = 0;
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x === y) continue;
    const rx = RANK[x] as number;
    const ry = RANK[y] as number;
    if (rx !== ry) return rx < ry ? -1 : 1;
    if (caseOrder === 0) caseOrder = x > y ? -1 : 1; // same letter: lowercase (the higher code) first
  }
  if (a.length !== b.length) return a.length < b.length ? -1 : 1;
  return caseOrder;
}
