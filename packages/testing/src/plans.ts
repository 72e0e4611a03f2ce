/** The names of the indexes an EXPLAIN (FORMAT JSON) plan reads, in plan order. */
export function indexesIn(plan: unknown): string[] {
  const found: string[] = [];
  const walk = (node: unknown) => {
    if (Array.isArray(node)) node.forEach(walk);
    else if (node && typeof node === 'object') {
      for (const [key, value] of Object.entries(node)) {
        if (key === 'Index Name' && typeof value === 'string') found.push(value);
        else walk(value);
      }
    }
  };
  walk(plan);
  return found;
}
