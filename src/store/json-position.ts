/**
 * Where a JSON text first goes wrong, as FILE:LINE:COLUMN material. Node 20's JSON.parse often names no
 * position ("Unexpected token 'o', ..."), so a small scanner finds the offset (and says what it expected);
 * `documents.ts` words the errors of every result document dbsmack reads.
 */

export interface JsonFault {
  offset: number;
  message: string;
}

/** The first syntax error in `text`, or undefined when it is valid JSON. */
export function findJsonFault(text: string): JsonFault | undefined {
  let i = 0;
  const ws = (): void => {
    while (i < text.length && ' \t\n\r'.includes(text[i]!)) i++;
  };
  const fail = (what: string): never => {
    throw {
      offset: i,
      message:
        i >= text.length
          ? `unexpected end of file, expected ${what}`
          : `unexpected ${JSON.stringify(text[i])}, expected ${what}`,
    } satisfies JsonFault;
  };
  const string = (): void => {
    i++; // opening quote
    while (i < text.length && text[i] !== '"') {
      const c = text.charCodeAt(i);
      if (c < 0x20) fail('a closing quote');
      if (text[i] === '\\') {
        i++;
        if (text[i] === 'u') {
          if (!/^[0-9a-fA-F]{4}$/.test(text.slice(i + 1, i + 5))) fail('four hex digits');
          i += 4;
        } else if (!'"\\/bfnrt'.includes(text[i] ?? '')) fail('an escape character');
      }
      i++;
    }
    if (i >= text.length) fail('a closing quote');
    i++;
  };
  const value = (): void => {
    ws();
    const c = text[i];
    if (c === '{') {
      i++;
      ws();
      if (text[i] === '}') {
        i++;
        return;
      }
      for (;;) {
        ws();
        if (text[i] !== '"') fail('a property name in double quotes');
        string();
        ws();
        if (text[i] !== ':') fail("':'");
        i++;
        value();
        ws();
        if (text[i] === ',') {
          i++;
          continue;
        }
        if (text[i] === '}') {
          i++;
          return;
        }
        fail("',' or '}'");
      }
    }
    if (c === '[') {
      i++;
      ws();
      if (text[i] === ']') {
        i++;
        return;
      }
      for (;;) {
        value();
        ws();
        if (text[i] === ',') {
          i++;
          continue;
        }
        if (text[i] === ']') {
          i++;
          return;
        }
        fail("',' or ']'");
      }
    }
    if (c === '"') {
      string();
      return;
    }
    const num = /^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?/.exec(text.slice(i, i + 400));
    if (num && num[0].length > 0 && /[-\d]/.test(c ?? '')) {
      i += num[0].length;
      return;
    }
    for (const lit of ['true', 'false', 'null']) {
      if (text.startsWith(lit, i)) {
        i += lit.length;
        return;
      }
    }
    // A misspelt literal (`tru`): point at the first character that departs from it.
    for (const lit of ['true', 'false', 'null']) {
      if (text[i] === lit[0]) {
        let k = 0;
        while (k < lit.length && text[i + k] === lit[k]) k++;
        i += k;
        fail(`"${lit}"`);
      }
    }
    fail('a value');
  };
  try {
    value();
    ws();
    if (i < text.length) fail('the end of the file');
    return undefined;
  } catch (e) {
    if (typeof e === 'object' && e !== null && 'offset' in e) return e as JsonFault;
    throw e;
  }
}

/** Offset of the first syntax error in `text`, or undefined when it is valid JSON. */
export function jsonErrorOffset(text: string): number | undefined {
  return findJsonFault(text)?.offset;
}

/** 1-based `LINE:COLUMN` of an offset. */
export function lineColumn(text: string, offset: number): string {
  const before = text.slice(0, offset);
  const line = before.split('\n').length;
  return `${line}:${offset - before.lastIndexOf('\n')}`;
}
