/**
 * Where results go. Results to stdout and files, progress and messages to stderr, so pipes stay clean.
 *
 * Files are checked before any work starts (`checkOutputFile`, `checkOutputDir`: a bad `--out` fails in a
 * second, not after a ten-minute run) and written all at once or not at all (`writeOutputFile`: a temporary
 * file in the same directory, renamed over the target), so a full disk leaves the old file or none, never an
 * empty or torn one. A write that still fails is an `OutputError` naming the file (exit 5): the caller has
 * already printed and recorded the result.
 */
import {
  accessSync,
  closeSync,
  constants,
  createWriteStream,
  fsyncSync,
  mkdirSync,
  openSync,
  realpathSync,
  renameSync,
  type Stats,
  statSync,
  unlinkSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import path from 'node:path';
import { redactSecrets } from '../driver/redact.ts';
import { EXIT, UsageError, UserError } from '../errors.ts';
import { crypto } from '../lazy-crypto.ts';

/** Results go to stdout; progress and messages to stderr, so pipes stay clean. */
export function say(message: string): void {
  process.stderr.write(`${redactSecrets(message)}\n`);
}

/** A result file that could not be written after the work was done (exit 5). */
export class OutputError extends UserError {
  override readonly name = 'OutputError';
  readonly file: string;
  constructor(file: string, reason: string, hint?: string) {
    super(`cannot write ${file}: ${reason}`, hint, EXIT.output);
    this.file = file;
  }
}

/** What a system error code means, in words, for a message about FILE. */
export function fsReason(e: unknown): string {
  const err = e as NodeJS.ErrnoException;
  const words: Record<string, string> = {
    ENOSPC: 'no space left on the device',
    EDQUOT: 'disk quota exceeded',
    EFBIG: 'file too large (a file size limit, ulimit -f?)',
    EACCES: 'permission denied',
    EPERM: 'operation not permitted',
    EROFS: 'read-only file system',
    EISDIR: 'it is a directory',
    ENOTDIR: 'a part of the path is not a directory',
    ENOENT: 'no such file or directory',
    EEXIST: 'it already exists',
    EIO: 'input/output error',
    ENAMETOOLONG: 'the name is too long',
    ELOOP: 'too many symbolic links',
    EMFILE: 'too many open files',
  };
  const w = err?.code !== undefined ? words[err.code] : undefined;
  if (w !== undefined) return `${w} (${err.code})`;
  return err?.message ?? String(e);
}

/** A Node system error (ENOSPC, EACCES, …) rather than a bug. */
export function isSystemError(e: unknown): e is NodeJS.ErrnoException {
  const err = e as NodeJS.ErrnoException | undefined;
  return typeof err?.code === 'string' && /^E[A-Z0-9]+$/.test(err.code) && typeof err.syscall === 'string';
}

function statOrUndefined(p: string): Stats | undefined {
  try {
    return statSync(p);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw e;
  }
}

/** Why DIR, which does not exist as a directory, cannot take a file: its first part that is missing or a file. */
function missingDirReason(dir: string): string {
  let d = dir;
  for (;;) {
    const up = path.dirname(d);
    let st: Stats | undefined;
    try {
      st = statSync(up);
    } catch {
      if (up === d) return `no such directory ${dir}`;
      d = up;
      continue;
    }
    if (!st.isDirectory()) return `${up} is not a directory`;
    return `no such directory ${dir}`;
  }
}

/** The directory a new entry `file` goes into must exist, be a directory and be writable. */
function checkParent(file: string, what: string): void {
  const dir = path.dirname(path.resolve(file));
  let st: Stats | undefined;
  try {
    st = statSync(dir);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') {
      throw new UsageError(
        `cannot write ${what} ${file}: ${missingDirReason(dir)}`,
        'create the directory first, or give another path',
      );
    }
    throw new UsageError(`cannot write ${what} ${file}: ${fsReason(e)} (${dir})`);
  }
  if (!st.isDirectory()) throw new UsageError(`cannot write ${what} ${file}: ${dir} is not a directory`);
  try {
    accessSync(dir, constants.W_OK);
  } catch (e) {
    throw new UsageError(
      `cannot write ${what} ${file}: the directory ${dir} is not writable (${fsReason(e)})`,
    );
  }
}

/**
 * Check, before any work, that a result file can be written: its directory exists and is writable, and
 * the file itself, when it exists, is not a directory and is writable. `what` names the option (`--out`).
 */
export function checkOutputFile(file: string, what: string): void {
  let st: Stats | undefined;
  try {
    st = statOrUndefined(file);
  } catch (e) {
    // ENOTDIR: a part of the path is a file, which checkParent names
    if ((e as NodeJS.ErrnoException).code !== 'ENOTDIR') {
      throw new UsageError(`cannot write ${what} ${file}: ${fsReason(e)}`);
    }
  }
  if (st?.isDirectory()) {
    throw new UsageError(`cannot write ${what} ${file}: it is a directory`, 'give a file name');
  }
  if (st !== undefined) {
    try {
      accessSync(file, constants.W_OK);
    } catch (e) {
      throw new UsageError(`cannot write ${what} ${file}: ${fsReason(e)}`);
    }
    // a regular file is replaced by a new one: its directory must take it
    if (st.isFile()) checkParent(realpathSync(file), what);
    return;
  }
  checkParent(file, what);
}

/**
 * Check a directory that receives files (`--svg DIR`): it exists and is a writable directory, or it can be
 * made (its parent exists and is writable; only DIR itself is created, by `ensureOutputDir`).
 */
export function checkOutputDir(dir: string, what: string): void {
  let st: Stats | undefined;
  try {
    st = statOrUndefined(dir);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOTDIR') {
      throw new UsageError(`cannot write ${what} ${dir}: ${fsReason(e)}`);
    }
  }
  if (st === undefined) {
    checkParent(dir, what);
    return;
  }
  if (!st.isDirectory()) throw new UsageError(`cannot write ${what} ${dir}: it is not a directory`);
  try {
    accessSync(dir, constants.W_OK);
  } catch (e) {
    throw new UsageError(`cannot write ${what} ${dir}: the directory is not writable (${fsReason(e)})`);
  }
}

/** Create DIR (not its parents: a missing parent is a mistake `checkOutputDir` reports). */
export function ensureOutputDir(dir: string): void {
  try {
    mkdirSync(dir);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'EEXIST' && statOrUndefined(dir)?.isDirectory()) return;
    throw new OutputError(dir, fsReason(e));
  }
}

/**
 * Where a write to FILE goes: the file itself after any symbolic link, whether it is not a regular file
 * (`/dev/stdout`, a FIFO: written directly), and the temporary file beside it a regular file is written into
 * before the rename. A directory, or a link that cannot be followed, is an `OutputError` naming FILE.
 */
function outputTarget(file: string): { target: string; direct: boolean; tmp: string } {
  let target = file;
  let st: Stats | undefined;
  try {
    st = statOrUndefined(file);
    if (st !== undefined) target = realpathSync(file);
  } catch (e) {
    throw new OutputError(file, fsReason(e));
  }
  if (st?.isDirectory()) throw new OutputError(file, 'it is a directory');
  const direct = st !== undefined && !st.isFile();
  const tmp = direct
    ? target
    : path.join(
        path.dirname(target),
        `.${path.basename(target)}.${process.pid}.${crypto().randomBytes(4).toString('hex')}.tmp`,
      );
  return { target, direct, tmp };
}

/**
 * Write FILE all at once: into a temporary file in the same directory, flushed to the disk, then renamed
 * over FILE, so that FILE is the old content or the new, never empty or cut short. A target that is not a
 * regular file (`/dev/stdout`, a FIFO) is written directly; a symbolic link is followed. Throws an
 * `OutputError` naming FILE, with nothing left behind.
 */
export function writeOutputFile(file: string, content: string | Buffer, mode = 0o666): void {
  const { target, direct, tmp } = outputTarget(file);
  if (direct) {
    try {
      writeFileSync(target, content);
    } catch (e) {
      throw new OutputError(file, fsReason(e));
    }
    return;
  }
  let fd: number | undefined;
  try {
    fd = openSync(tmp, 'wx', mode);
    const buf = typeof content === 'string' ? Buffer.from(content) : content;
    for (let off = 0; off < buf.length; ) off += writeSync(fd, buf, off, buf.length - off);
    fsyncSync(fd);
    closeSync(fd);
    fd = undefined;
    renameSync(tmp, target);
  } catch (e) {
    if (fd !== undefined) {
      try {
        closeSync(fd);
      } catch {
        // already failing: the write's error is the one to report
      }
    }
    try {
      unlinkSync(tmp);
    } catch {
      // never created
    }
    throw new OutputError(file, fsReason(e));
  }
}

/** Write a result file readable only by its owner (it names hosts and users), passwords masked. */
export function writeResultFile(file: string, content: string): void {
  writeOutputFile(file, redactSecrets(content), 0o600);
}

/** A file written as a stream (gen-data's rows), all at once or not at all, like `writeOutputFile`. */
export interface OutputStream {
  stream: NodeJS.WritableStream;
  /** Flush, sync and rename over the target; throws an `OutputError`, with nothing left behind. */
  commit(): Promise<void>;
  /** Drop the temporary file. */
  abort(): void;
}

/** Open FILE for a stream of writes (see `OutputStream`); a target that is not a regular file is written directly. */
export function openOutputStream(file: string, mode = 0o666): OutputStream {
  const { target, direct, tmp } = outputTarget(file);
  let fd: number;
  try {
    fd = openSync(tmp, direct ? 'w' : 'wx', mode);
  } catch (e) {
    throw new OutputError(file, fsReason(e));
  }
  const stream = createWriteStream('', { fd, autoClose: false });
  let failure: unknown;
  stream.on('error', (e) => {
    failure ??= e;
  });
  const cleanup = (): void => {
    try {
      closeSync(fd);
    } catch {
      // closed already
    }
    if (!direct) {
      try {
        unlinkSync(tmp);
      } catch {
        // gone already
      }
    }
  };
  return {
    stream,
    async commit() {
      await new Promise<void>((resolve) => {
        if (stream.writableFinished || failure !== undefined) resolve();
        else {
          stream.once('error', () => resolve());
          stream.end(() => resolve());
        }
      });
      try {
        if (failure !== undefined) throw failure;
        if (!direct) fsyncSync(fd);
        closeSync(fd);
        if (!direct) renameSync(tmp, target);
      } catch (e) {
        cleanup();
        throw new OutputError(file, fsReason(e));
      }
    },
    abort() {
      stream.destroy();
      cleanup();
    },
  };
}
