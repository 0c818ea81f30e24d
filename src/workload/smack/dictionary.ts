/**
 * Dictionaries: where `$name` values come from. Types `rand` (a random word), `seq` (words in order,
 * wrapping) and `unique` (a template filled with 0, 1, 2, …); sources `file` (with `delim` and
 * `file_size_equiv`), `list` and `template`. Fixed from the original: the last item of a list is kept and a
 * trailing comma adds nothing, `\,` puts a comma into an item, the last line of a file is kept without a
 * trailing newline, an empty dictionary is an error rather than a crash, and `unique` values are unique
 * across all clients of a run (client c of N draws c, c+N, c+2N, …).
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { Random } from '../types.ts';
import type { Pos } from './ast.ts';
import { SmackError } from './errors.ts';

export interface DictionaryDef {
  name: string;
  pos: Pos;
  type: 'rand' | 'seq' | 'unique';
  sourceType: 'file' | 'list' | 'template' | undefined;
  source: string;
  /** Only the first character counts, as in the original; '' means whole lines. */
  delim: string;
  fileSizeEquiv: number;
  /** Position of `source`, for errors about the file or list. */
  sourcePos: Pos;
}

/** Resolve a data or dictionary file name against the data directory (absolute names stay). */
export function dataPath(datadir: string, name: string): string {
  return path.isAbsolute(name) ? name : path.join(datadir, name);
}

/** Split a list source on commas; `\,` is a comma inside an item and `\\` a backslash. */
export function splitList(src: string): string[] {
  const items: string[] = [];
  let cur = '';
  for (let i = 0; i < src.length; i++) {
    const c = src[i] as string;
    if (c === '\\' && (src[i + 1] === ',' || src[i + 1] === '\\')) {
      cur += src[i + 1];
      i++;
    } else if (c === ',') {
      items.push(cur);
      cur = '';
    } else cur += c;
  }
  if (cur !== '') items.push(cur);
  return items;
}

/**
 * Read the words of a file source: every step-th line, cut at the delimiter. Only the kept lines are
 * decoded, because every worker thread reads the file (select-key's is 5 MB for 750 words).
 */
export function readFileWords(file: string, delim: string, fileSizeEquiv: number): string[] {
  const buf = readFileSync(file);
  const step = fileSizeEquiv > 0 ? Math.max(1, Math.floor(buf.length / fileSizeEquiv)) : 1;
  const d = delim[0];
  const words: string[] = [];
  let start = 0;
  for (let n = 1; start < buf.length; n++) {
    let end = buf.indexOf(10, start);
    if (end < 0) end = buf.length;
    if (n % step === 0) {
      let w = buf.toString('latin1', start, end);
      if (w.endsWith('\r')) w = w.slice(0, -1);
      if (d !== undefined) {
        const k = w.indexOf(d);
        if (k >= 0) w = w.slice(0, k);
      }
      words.push(w);
    }
    start = end + 1;
  }
  return words;
}

/** Format an integer with a printf-like template holding one %d/%i/%u/%x/%X/%o (flags 0 and -, a width). */
export function compileUniqueTemplate(tpl: string, file: string, pos: Pos): (id: number) => string {
  const re = /%([-0]*)(\d*)([diuxXo%])/g;
  const pieces: ((id: number) => string)[] = [];
  let last = 0;
  let convs = 0;
  for (let m = re.exec(tpl); m !== null; m = re.exec(tpl)) {
    const lit = tpl.slice(last, m.index);
    if (lit.includes('%')) break;
    pieces.push(() => lit);
    last = m.index + m[0].length;
    const [, flags = '', width = '', conv = 'd'] = m;
    if (conv === '%') {
      pieces.push(() => '%');
      continue;
    }
    convs++;
    const w = width === '' ? 0 : Number(width);
    const left = flags.includes('-');
    const zero = flags.includes('0') && !left;
    const radix = conv === 'x' || conv === 'X' ? 16 : conv === 'o' ? 8 : 10;
    pieces.push((id) => {
      let s = id.toString(radix);
      if (conv === 'X') s = s.toUpperCase();
      return left ? s.padEnd(w, ' ') : s.padStart(w, zero ? '0' : ' ');
    });
  }
  const rest = tpl.slice(last);
  if (rest.includes('%') || convs !== 1) {
    throw new SmackError(
      file,
      pos,
      `template "${tpl}" must hold exactly one integer conversion`,
      'e.g. "user_%d" or "%08x"; write %% for a literal %',
    );
  }
  pieces.push(() => rest);
  return (id) => pieces.map((p) => p(id)).join('');
}

/** A dictionary as one client uses it. */
export interface DictionaryInstance {
  next(): string;
}

/** Load the words of a dictionary (file or list); a template dictionary has none. */
export function loadWords(def: DictionaryDef, file: string, datadir: string): string[] {
  if (def.sourceType === 'list') return splitList(def.source);
  if (def.sourceType === 'file') {
    const p = dataPath(datadir, def.source);
    try {
      return readFileWords(p, def.delim, def.fileSizeEquiv);
    } catch (e) {
      throw new SmackError(
        file,
        def.sourcePos,
        `dictionary "${def.name}": cannot read ${p}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`,
        'relative file names are read from the data directory (-D DIR)',
      );
    }
  }
  return [];
}

/** Words or generator for one client of a run. */
export function instantiate(
  def: DictionaryDef,
  words: readonly string[],
  file: string,
  random: Random,
  clientId: number,
  clients: number,
): DictionaryInstance {
  if (def.type === 'unique') {
    const fmt = compileUniqueTemplate(def.sourceType === 'template' ? def.source : '%d', file, def.sourcePos);
    let k = 0;
    return { next: () => fmt(clientId + clients * k++) };
  }
  if (words.length === 0) {
    throw new SmackError(
      file,
      def.sourcePos,
      `dictionary "${def.name}" is empty`,
      def.sourceType === 'file'
        ? 'the file has no lines (or file_size_equiv skipped them all)'
        : 'a list is "a,b,c": items separated by commas',
    );
  }
  if (def.type === 'seq') {
    let i = 0;
    return {
      next: () => {
        const w = words[i] as string;
        i = i + 1 === words.length ? 0 : i + 1;
        return w;
      },
    };
  }
  const n = words.length;
  return { next: () => words[random.int(0, n - 1)] as string };
}
