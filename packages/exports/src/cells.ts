import type { Cell } from './columns';

/**
 * Spreadsheet formula-injection guard for csv and xlsx: a string starting with =, +, -, @,
 * tab or carriage return gets a leading single quote so a spreadsheet shows it as text
 * instead of evaluating it. Numbers, booleans and null pass unchanged (a negative number
 * stays a number).
 */
export function neutraliseCell<T extends Cell>(value: T): T | string {
  if (typeof value !== 'string' || value.length === 0) return value;
  switch (value.charCodeAt(0)) {
    case 0x3d: // =
    case 0x2b: // +
    case 0x2d: // -
    case 0x40: // @
    case 0x09: // \t
    case 0x0d: // \r
      return `'${value}`;
    default:
      return value;
  }
}
