/**
 * The symbols of a server binary, read from its ELF symbol tables (`.symtab` when present, `.dynsym`, which
 * even Debian's stripped `mariadbd` and `postgres` keep): function symbols to place uprobes by name
 * (`--count-calls open_table,JOIN::exec`), and data symbols to name the global lock a thread slept on. Only
 * 64-bit little-endian files (x86-64, arm64); anything else is reported, not guessed at.
 */
import { closeSync, openSync, readSync } from 'node:fs';

export interface ElfSymbol {
  name: string;
  value: number;
  size: number;
}

export interface ElfSymbols {
  /** ET_DYN (position independent: addresses are relative to where it is loaded) or ET_EXEC. */
  pie: boolean;
  /** Virtual address of the first loadable segment (what a mapping at file offset 0 starts at). */
  firstLoadVaddr: number;
  functions: ElfSymbol[];
  /** Data objects, sorted by address. */
  objects: ElfSymbol[];
}

export class ElfError extends Error {}

const SHT_SYMTAB = 2;
const SHT_DYNSYM = 11;
const STT_OBJECT = 1;
const STT_FUNC = 2;
const STT_GNU_IFUNC = 10;
const PT_LOAD = 1;

function readAt(fd: number, offset: number, length: number): Buffer {
  const b = Buffer.alloc(length);
  let done = 0;
  while (done < length) {
    const n = readSync(fd, b, done, length - done, offset + done);
    if (n === 0)
      throw new ElfError(`the file ends at ${offset + done}, inside a table that runs to ${offset + length}`);
    done += n;
  }
  return b;
}

const u64 = (b: Buffer, at: number): number => Number(b.readBigUInt64LE(at));

/** Read the function and data symbols of an ELF file. Throws ElfError for files it does not read. */
export function readElfSymbols(file: string): ElfSymbols {
  const fd = openSync(file, 'r');
  try {
    const h = readAt(fd, 0, 64);
    if (h.readUInt32BE(0) !== 0x7f454c46) throw new ElfError(`${file} is not an ELF file`);
    if (h[4] !== 2 || h[5] !== 1) throw new ElfError(`${file} is not a 64-bit little-endian ELF file`);
    const type = h.readUInt16LE(16);
    const phoff = u64(h, 32);
    const shoff = u64(h, 40);
    const phentsize = h.readUInt16LE(54);
    const phnum = h.readUInt16LE(56);
    const shentsize = h.readUInt16LE(58);
    const shnum = h.readUInt16LE(60);
    let firstLoadVaddr = Number.POSITIVE_INFINITY;
    if (phnum > 0) {
      const ph = readAt(fd, phoff, phentsize * phnum);
      for (let i = 0; i < phnum; i++) {
        const at = i * phentsize;
        if (ph.readUInt32LE(at) === PT_LOAD) firstLoadVaddr = Math.min(firstLoadVaddr, u64(ph, at + 16));
      }
    }
    const sh = readAt(fd, shoff, shentsize * shnum);
    const section = (i: number) => {
      const at = i * shentsize;
      return {
        type: sh.readUInt32LE(at + 4),
        offset: u64(sh, at + 24),
        size: u64(sh, at + 32),
        link: sh.readUInt32LE(at + 40),
        entsize: u64(sh, at + 56),
      };
    };
    const functions = new Map<string, ElfSymbol>();
    const objects = new Map<string, ElfSymbol>();
    for (let i = 0; i < shnum; i++) {
      const s = section(i);
      if (s.type !== SHT_SYMTAB && s.type !== SHT_DYNSYM) continue;
      if (s.entsize !== 24 || s.size === 0) continue;
      const strs = section(s.link);
      const table = readAt(fd, s.offset, s.size);
      const names = readAt(fd, strs.offset, strs.size);
      for (let at = 0; at + 24 <= table.length; at += 24) {
        const kind = (table[at + 4] ?? 0) & 0xf;
        const shndx = table.readUInt16LE(at + 6);
        if (shndx === 0) continue; // undefined: imported from a library
        if (kind !== STT_FUNC && kind !== STT_GNU_IFUNC && kind !== STT_OBJECT) continue;
        const nameAt = table.readUInt32LE(at);
        const end = names.indexOf(0, nameAt);
        const name = names.toString('latin1', nameAt, end < 0 ? names.length : end);
        if (name === '') continue;
        const sym = { name, value: u64(table, at + 8), size: u64(table, at + 16) };
        (kind === STT_OBJECT ? objects : functions).set(`${name}@${sym.value}`, sym);
      }
    }
    return {
      pie: type === 3,
      firstLoadVaddr: Number.isFinite(firstLoadVaddr) ? firstLoadVaddr : 0,
      functions: [...functions.values()],
      objects: [...objects.values()].sort((a, b) => a.value - b.value),
    };
  } finally {
    closeSync(fd);
  }
}

const escapeRe = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * The symbol names (mangled, as the symbol table spells them) of a function given as a C or C++ name:
 * `open_table` (a C function, or a C++ one in the global namespace, every overload), `JOIN::exec`,
 * `ns::Class::method`, a constructor `Class::Class` or a destructor `Class::~Class`. Templates and operators
 * are not matched by their written name; give the mangled name for those.
 */
export function matchFunction(symbols: readonly ElfSymbol[], name: string): string[] {
  const parts = name.split('::');
  const enc = (p: string): string => `${p.length}${escapeRe(p)}`;
  let re: RegExp;
  if (parts.length === 1) {
    // the length prefix fixes the name: whatever follows is the parameter list
    re = new RegExp(`^(${escapeRe(name)}|_Z${enc(name)}.*)$`);
  } else {
    const last = parts[parts.length - 1] ?? '';
    const owner = parts[parts.length - 2] ?? '';
    const scope = parts.slice(0, -1).map(enc).join('');
    const tail =
      last === owner ? 'C[1-3]' : last === `~${owner}` ? 'D[0-2]' : `${enc(last)}(B\\d+[0-9A-Za-z_]+)*`;
    re = new RegExp(`^_ZN[rVKRO]*${scope}${tail}[EI].*$`);
  }
  const out = new Set<string>();
  // `.cold` parts are not entry points
  for (const s of symbols) if (re.test(s.name) && !/\.cold(\.\d+)?$/.test(s.name)) out.add(s.name);
  return [...out].sort();
}

/** `symbol` or `symbol+0x18` for an address inside a data object, given the load bias; undefined elsewhere. */
export function dataSymbolAt(objects: readonly ElfSymbol[], address: number): string | undefined {
  let lo = 0;
  let hi = objects.length - 1;
  let found: ElfSymbol | undefined;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    const o = objects[mid] as ElfSymbol;
    if (o.value <= address) {
      found = o;
      lo = mid + 1;
    } else hi = mid - 1;
  }
  if (found === undefined || address >= found.value + Math.max(1, found.size)) return undefined;
  const off = address - found.value;
  return off === 0 ? found.name : `${found.name}+0x${off.toString(16)}`;
}
