/**
 * The syntax tree of a `.smack` file. Every node keeps the position of the token it came from, so that the
 * compile step can name FILE:LINE:COLUMN for errors it finds after parsing (an undefined query, a `$3`
 * with two arguments).
 */

/** 1-based line and column of a token in the source file. */
export interface Pos {
  line: number;
  col: number;
}

/** `name "value";` inside a block; the value is always a quoted string, as in the original. */
export interface Property {
  name: string;
  value: string;
  pos: Pos;
  valuePos: Pos;
}

export type BlockKind = 'query' | 'dictionary' | 'client' | 'table';

export interface Block {
  kind: BlockKind;
  name: string;
  pos: Pos;
  props: Property[];
}

export type Expr =
  | { kind: 'number'; text: string; pos: Pos }
  | { kind: 'string'; value: string; pos: Pos }
  | { kind: 'arg'; index: number; pos: Pos }
  | { kind: 'var'; name: string; pos: Pos }
  | { kind: 'stat'; client: string; type: string | undefined; stat: string; pos: Pos }
  | { kind: 'concat'; parts: Expr[]; pos: Pos };

export type MainStatement =
  | { kind: 'call'; client: string; method: string; args: Expr[]; pos: Pos; methodPos: Pos }
  | { kind: 'assign'; name: string; value: Expr; pos: Pos };

export interface SmackProgram {
  file: string;
  blocks: Block[];
  main: MainStatement[];
  mainPos: Pos;
}
