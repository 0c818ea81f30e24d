/**
 * The load workers' histograms: HdrHistogram's 32-bit WebAssembly implementation, the AssemblyScript
 * module that hdr-histogram-js ships (about 27 ns a value), loaded here rather than through that package's
 * wrapper (`hdr-histogram-js/dist/wasm`). The wrapper inflates the module with pako, a JavaScript zlib that
 * runs cold in every worker (about 20 ms of CPU, a tenth of a short run's); this file reads the bytes the
 * build extracted (`histogramWasmPaths`), inflating the package's copy with node:zlib only where there is
 * no build, and keeps only what the workers do: record, reset, and encode a snapshot in the standard
 * compressed base64 encoding, byte for byte what `encodeIntoCompressedBase64` of the package gives (the
 * same cookie, the wasm's own V2 encoding, node:zlib's deflate, which the package uses too under Node).
 * It loads no other part of hdr-histogram-js: the merging, decoding and summaries are histogram.ts's.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { deflateSync, inflateSync } from 'node:zlib';

/** Highest value tracked, in microseconds (1 hour). Longer latencies are clamped to it. */
export const HIGHEST_US = 3_600_000_000;

/** What the workers do with a histogram. */
export interface RecordingHistogram {
  readonly totalCount: number;
  recordValue(value: number): void;
  reset(): void;
  /** Free its WebAssembly memory; it cannot be used after. */
  destroy(): void;
}

/** The demangled exports of the AssemblyScript module (the loader's view), as far as they are used here. */
interface WasmExports {
  Histogram32: new (lowest: number, highest: number, digits: number, autoResize: boolean) => WasmHistogram32;
  __pin(ptr: unknown): number;
  __unpin(ptr: unknown): void;
  __getUint8Array(ptr: number): Uint8Array;
}
interface WasmHistogram32 {
  readonly totalCount: number;
  recordValue(value: number): void;
  reset(): void;
  encode(): number;
}

let wasm: WasmExports | undefined;

/**
 * Load the WebAssembly module (once per thread; `recordingHistogram` does it when not done yet). The
 * loader is the one hdr-histogram-js depends on, resolved from that package.
 */
export async function initHistograms(): Promise<void> {
  loadWasm();
}

function loadWasm(): WasmExports {
  if (wasm === undefined) {
    const { wrapper, file } = histogramWasmPaths();
    const loader = createRequire(wrapper)('@assemblyscript/loader') as {
      instantiateSync(bytes: Uint8Array): { exports: WasmExports };
    };
    let bytes: Uint8Array;
    try {
      // importing the package's 39 kB base64 copy and inflating it cost a worker about 12 ms of CPU
      bytes = readFileSync(file);
    } catch {
      bytes = packageWasmBytes(wrapper); // not built (a run from the sources)
    }
    const w = loader.instantiateSync(bytes);
    wasm = w.exports ?? (w as unknown as WasmExports);
  }
  return wasm;
}

/**
 * Where the module comes from: `wrapper`, hdr-histogram-js's WebAssembly wrapper as resolved from here (its
 * loader and base64 copy sit beside it), and `file`, the module's bytes as the build extracts them for this
 * version of the package (dist/hdr-histogram-<version>.wasm, written by scripts/bundle.js).
 */
export function histogramWasmPaths(): { wrapper: string; file: string } {
  const wrapper = createRequire(import.meta.url).resolve('hdr-histogram-js/dist/wasm/index.js');
  const pkg = JSON.parse(readFileSync(path.join(wrapper, '..', '..', '..', 'package.json'), 'utf8')) as {
    version?: unknown;
  };
  const version = String(pkg.version).replace(/[^0-9A-Za-z.-]/g, '_');
  const file = fileURLToPath(new URL(`../../dist/hdr-histogram-${version}.wasm`, import.meta.url));
  return { wrapper, file };
}

/** The module's bytes inflated from the package's own base64 copy. */
export function packageWasmBytes(wrapper: string): Buffer {
  const { BINARY } = createRequire(wrapper)('./generated-wasm.js') as { BINARY: string };
  return inflateSync(Buffer.from(BINARY, 'base64'));
}

/** The V2 compressed encoding's cookie (HdrHistogram's `encodeIntoCompressedByteBuffer`). */
const COMPRESSED_COOKIE = 0x1c849304 | 0x10;

class WasmRecording implements RecordingHistogram {
  private h: WasmHistogram32 | undefined;
  constructor(private readonly w: WasmExports) {
    this.h = new w.Histogram32(1, HIGHEST_US, 3, false);
    w.__pin(this.h);
  }
  private get live(): WasmHistogram32 {
    if (this.h === undefined) throw new Error('Cannot use a destroyed histogram');
    return this.h;
  }
  get totalCount(): number {
    return this.live.totalCount;
  }
  recordValue(value: number): void {
    this.live.recordValue(value);
  }
  reset(): void {
    this.live.reset();
  }
  destroy(): void {
    if (this.h !== undefined) this.w.__unpin(this.h);
    this.h = undefined;
  }
  /** The standard compressed base64 encoding. */
  encodeCompressed(): string {
    const ptr = this.w.__pin(this.live.encode());
    const plain = this.w.__getUint8Array(ptr);
    this.w.__unpin(ptr);
    return compressedBase64(plain);
  }
}

/**
 * The V2 encoding's compressed envelope around a plain encoding, in base64: the cookie, the length, and
 * node:zlib's deflate (the package's own choice under Node). Shared with hdr-codec.ts, the main thread's.
 */
export function compressedBase64(plain: Uint8Array): string {
  const compressed = deflateSync(plain);
  const out = Buffer.allocUnsafe(8 + compressed.byteLength);
  out.writeInt32BE(COMPRESSED_COOKIE, 0);
  out.writeInt32BE(compressed.byteLength, 4);
  compressed.copy(out, 8);
  return out.toString('base64');
}

/** A 32-bit WebAssembly histogram of 1 µs to 1 hour, 3 significant digits, no resizing. */
export function recordingHistogram(): RecordingHistogram {
  return new WasmRecording(loadWasm());
}

export function isRecordingHistogram(h: unknown): h is RecordingHistogram & { encodeCompressed(): string } {
  return h instanceof WasmRecording;
}

/** A worker's snapshot of a histogram: the standard compressed base64 encoding. */
export function encodeRecording(h: RecordingHistogram): string {
  if (!(h instanceof WasmRecording)) throw new Error('not a recording histogram');
  return h.encodeCompressed();
}
