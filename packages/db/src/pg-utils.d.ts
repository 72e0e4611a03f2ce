/** The two helpers of pg's own that the pipelined client uses (pg ships no types for them). */
declare module 'pg/lib/utils' {
  /** A parameter value as the text pg sends for it (null for SQL NULL; a Buffer for bytea). */
  export function prepareValue(value: unknown): string | Buffer | null;
  /** A string quoted as a SQL literal ('…', or E'…' when it holds backslashes). */
  export function escapeLiteral(text: string): string;
}
