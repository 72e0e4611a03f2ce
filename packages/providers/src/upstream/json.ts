/**
 * JSON parsing that keeps 64-bit integers exact. TikTok (and occasionally other upstreams)
 * send IDs as bare JSON numbers above 2^53; JSON.parse would round them. Before parsing, every
 * integer literal outside a string whose magnitude exceeds Number.MAX_SAFE_INTEGER is quoted,
 * so it arrives as a string with all its digits. Smaller numbers stay numbers.
 */
const MAX_SAFE = String(Number.MAX_SAFE_INTEGER);

function isUnsafeInteger(digits: string): boolean {
  const abs = digits.startsWith('-') ? digits.slice(1) : digits;
  if (abs.length !== MAX_SAFE.length) return abs.length > MAX_SAFE.length;
  return abs > MAX_SAFE;
}

export function quoteBigIntegers(text: string): string {
  let out = '';
  let last = 0;
  let i = 0;
  const n = text.length;
  while (i < n) {
    const c = text.charCodeAt(i);
    if (c === 34 /* " */) {
      // Skip the whole string literal, honouring escapes.
      i++;
      while (i < n) {
        const d = text.charCodeAt(i);
        if (d === 92 /* \ */) i += 2;
        else if (d === 34) {
          i++;
          break;
        } else i++;
      }
      continue;
    }
    if (c === 45 /* - */ || (c >= 48 && c <= 57)) {
      const start = i;
      i++;
      while (i < n) {
        const d = text.charCodeAt(i);
        if ((d >= 48 && d <= 57) || d === 46 || d === 101 || d === 69 || d === 43 || d === 45) i++;
        else break;
      }
      const literal = text.slice(start, i);
      if (/^-?\d+$/.test(literal) && isUnsafeInteger(literal)) {
        out += text.slice(last, start) + '"' + literal + '"';
        last = i;
      }
      continue;
    }
    i++;
  }
  return last === 0 ? text : out + text.slice(last);
}

/** JSON.parse with integers beyond 2^53 turned into strings. */
export function parseJsonExact(text: string): unknown {
  return JSON.parse(quoteBigIntegers(text));
}
