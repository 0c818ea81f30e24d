/**
 * Recursive-descent parser of the smack language (the grammar of super-smack 1.3: query, dictionary,
 * client and table blocks, then `main`). It only builds the tree; names and values are checked by
 * `compile.ts`, which knows what they refer to.
 */
import type { Block, BlockKind, Expr, MainStatement, Pos, Property, SmackProgram } from './ast.ts';
import { SmackError } from './errors.ts';
import { describeToken, type Token, tokenize } from './lexer.ts';

/** Properties each block accepts, as in the original grammar. */
export const BLOCK_PROPERTIES: Record<BlockKind, readonly string[]> = {
  query: ['query', 'type', 'has_result_set', 'parsed'],
  dictionary: ['type', 'source_type', 'source', 'delim', 'file_size_equiv'],
  client: ['query_barrel', 'user', 'pass', 'db', 'host', 'port', 'socket'],
  table: ['client', 'create', 'min_rows', 'data_file', 'gen_data_file'],
};

const BLOCK_KINDS = new Set<string>(['query', 'dictionary', 'client', 'table']);

class Parser {
  private i = 0;
  constructor(
    private readonly toks: Token[],
    private readonly file: string,
  ) {}

  private peek(o = 0): Token {
    return this.toks[Math.min(this.i + o, this.toks.length - 1)] as Token;
  }

  private next(): Token {
    const t = this.peek();
    if (t.kind !== 'eof') this.i++;
    return t;
  }

  private fail(t: Token, message: string, hint?: string): never {
    throw new SmackError(this.file, t.pos, `${message} near ${describeToken(t)}`, hint);
  }

  private punct(p: string, what: string, hint?: string): Token {
    const t = this.next();
    if (t.kind !== 'punct' || t.text !== p) this.fail(t, `expected '${p}' ${what}`, hint);
    return t;
  }

  private string(what: string, hint?: string): Token {
    const t = this.next();
    if (t.kind !== 'string') this.fail(t, `expected a double-quoted string ${what}`, hint);
    return t;
  }

  private word(what: string, hint?: string): Token {
    const t = this.next();
    if (t.kind !== 'word') this.fail(t, `expected a name ${what}`, hint);
    return t;
  }

  program(): SmackProgram {
    const blocks: Block[] = [];
    for (;;) {
      const t = this.peek();
      if (t.kind === 'word' && BLOCK_KINDS.has(t.text)) {
        blocks.push(this.block());
        continue;
      }
      if (t.kind === 'word' && t.text === 'main') break;
      if (t.kind === 'eof') {
        this.fail(t, 'missing main block', 'a smack file ends with main { … } after its other blocks');
      }
      this.fail(
        t,
        'expected a block (query, dictionary, client, table or main)',
        'each block is written KIND "name" { property "value"; … }',
      );
    }
    const mainTok = this.next();
    this.punct('{', 'after main');
    const main: MainStatement[] = [];
    while (!(this.peek().kind === 'punct' && this.peek().text === '}')) {
      main.push(this.statement());
    }
    this.next();
    if (main.length === 0) this.fail(mainTok, 'empty main block', 'main needs at least one statement');
    const end = this.peek();
    if (end.kind !== 'eof') this.fail(end, 'unexpected text after the main block', 'main must be last');
    return { file: this.file, blocks, main, mainPos: mainTok.pos };
  }

  private block(): Block {
    const kw = this.next();
    const kind = kw.text as BlockKind;
    const name = this.string(`naming the ${kind} block`, `write ${kind} "name" { … }`);
    this.punct('{', `to open the ${kind} block`);
    const props: Property[] = [];
    const allowed = BLOCK_PROPERTIES[kind];
    while (!(this.peek().kind === 'punct' && this.peek().text === '}')) {
      const p = this.next();
      if (p.kind !== 'word' || !allowed.includes(p.text)) {
        this.fail(
          p,
          p.kind === 'word'
            ? `unknown property '${p.text}' in a ${kind} block`
            : `expected a ${kind} property`,
          `a ${kind} block takes: ${allowed.join(', ')}; or its closing }`,
        );
      }
      const v = this.string(
        `as the value of ${p.text}`,
        'every value is quoted, numbers too: min_rows "100";',
      );
      this.punct(';', `after the value of ${p.text}`);
      props.push({ name: p.text, value: v.text, pos: p.pos, valuePos: v.pos });
    }
    const close = this.next();
    if (props.length === 0) {
      this.fail(close, `empty ${kind} block "${name.text}"`, `a ${kind} block needs at least one property`);
    }
    return { kind, name: name.text, pos: kw.pos, props };
  }

  private statement(): MainStatement {
    const t = this.peek();
    if (t.kind === 'punct' && t.text === '$') {
      this.next();
      const name = this.word('after $ in an assignment', 'write $name = value;');
      this.punct('=', `after $${name.text}`, 'write $name = value;');
      const value = this.expr();
      this.punct(';', 'after the assignment');
      return { kind: 'assign', name: name.text, value, pos: t.pos };
    }
    const client = this.word(
      'of a client in main',
      'main holds calls like client.method(args); and assignments $name = value;',
    );
    this.punct('.', `after the client name '${client.text}'`, 'write client.method(args);');
    const method = this.word('of a method', 'e.g. init, set_num_rounds, create_threads, connect');
    this.punct('(', `after ${client.text}.${method.text}`);
    const args: Expr[] = [];
    if (!(this.peek().kind === 'punct' && this.peek().text === ')')) {
      for (;;) {
        args.push(this.expr());
        const sep = this.peek();
        if (sep.kind === 'punct' && sep.text === ',') {
          this.next();
          continue;
        }
        break;
      }
    }
    this.punct(')', `to close the arguments of ${method.text}`);
    this.punct(';', `after ${client.text}.${method.text}(…)`);
    return {
      kind: 'call',
      client: client.text,
      method: method.text,
      args,
      pos: client.pos,
      methodPos: method.pos,
    };
  }

  private expr(): Expr {
    const first = this.primary();
    const parts = [first];
    while (this.peek().kind === 'punct' && this.peek().text === '.') {
      this.next();
      parts.push(this.primary());
    }
    return parts.length === 1 ? first : { kind: 'concat', parts, pos: first.pos };
  }

  private primary(): Expr {
    const t = this.next();
    if (t.kind === 'number') return { kind: 'number', text: t.text, pos: t.pos };
    if (t.kind === 'string') return { kind: 'string', value: t.text, pos: t.pos };
    if (t.kind === 'punct' && t.text === '$') {
      const n = this.next();
      if (n.kind === 'number') return { kind: 'arg', index: Number(n.text), pos: t.pos };
      if (n.kind === 'word') return { kind: 'var', name: n.text, pos: t.pos };
      this.fail(n, 'expected an argument number or a variable name after $', 'write $1 or $name');
    }
    if (t.kind === 'word') {
      this.punct('::', `after '${t.text}' in an expression`, 'write client::stat or client::type::stat');
      const a = this.word('after ::', 'e.g. avg_connect_time, or a query type');
      if (this.peek().kind === 'punct' && this.peek().text === '::') {
        this.next();
        const b = this.word('after ::', 'num_queries, max_time, min_time or q_per_s');
        return { kind: 'stat', client: t.text, type: a.text, stat: b.text, pos: t.pos };
      }
      return { kind: 'stat', client: t.text, type: undefined, stat: a.text, pos: t.pos };
    }
    this.fail(
      t,
      'expected a value',
      'a value is a number, a "string", $1 (command-line argument), $name, or client::type::stat',
    );
  }
}

/** Parse smack source; throws `SmackError` (FILE:LINE:COLUMN) on malformed input. */
export function parseSmack(src: string, file: string): SmackProgram {
  return new Parser(tokenize(src, file), file).program();
}

export type { Pos };
