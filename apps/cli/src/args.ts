import { type Command, InvalidArgumentError } from 'commander';
import { Context } from './context';

/** A positive (or zero, with min 0) decimal integer option. */
export function integer(min = 1): (value: string) => number {
  return (value) => {
    if (!/^\d+$/.test(value) || Number(value) < min) throw new InvalidArgumentError(`expected an integer of at least ${min}`);
    return Number(value);
  };
}

/** A value from a fixed list. */
export function oneOf<T extends string>(values: readonly T[]): (value: string) => T {
  return (value) => {
    if (!values.includes(value as T)) throw new InvalidArgumentError(`expected one of ${values.join(', ')}`);
    return value as T;
  };
}

/** Repeatable option: each use adds one value. */
export function collect(value: string, previous: string[] = []): string[] {
  return [...previous, value];
}

/** A commander action with the context made from the global options (--json, --quiet). */
export function action<A extends unknown[]>(
  handler: (ctx: Context, ...args: A) => void | Promise<void>,
): (...args: unknown[]) => Promise<void> {
  return async (...args: unknown[]) => {
    const command = args[args.length - 1] as Command;
    const globals = command.optsWithGlobals<{ json?: boolean; quiet?: boolean }>();
    const ctx = new Context({ stdout: process.stdout, stderr: process.stderr, stdin: process.stdin, env: process.env }, globals);
    await handler(ctx, ...(args.slice(0, -1) as A));
  };
}
