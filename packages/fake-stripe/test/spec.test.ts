import { readFileSync } from 'node:fs';
import path from 'node:path';
import { OPERATIONS, extractSubset, formatSubset } from '../src/extract';
import { stripeSubset } from '../src';

const FILE = path.join(__dirname, '../spec/stripe-subset.json');

describe("the subset of Stripe's OpenAPI description", () => {
  const subset = stripeSubset();

  it.each(OPERATIONS.map(([method, p]) => [method.toUpperCase(), p, method] as const))(
    'describes %s %s with a closed form request body',
    (_m, p, method) => {
      const operation = subset.paths[p]?.[method] as
        { requestBody: { content: Record<string, { schema: unknown }> }; responses: Record<string, unknown> } | undefined;
      expect(operation).toBeDefined();
      const form = operation!.requestBody.content['application/x-www-form-urlencoded'];
      expect(form.schema).toMatchObject({ type: 'object', additionalProperties: false });
      expect(operation!.responses['200']).toBeDefined();
    },
  );

  it('is closed under $ref and exactly what tools/extract-spec.ts writes for these operations', () => {
    // Extracting from the subset itself gives the subset back: every schema it references is in
    // it, it holds nothing else, and the file is in the tool's format.
    const again = extractSubset(subset, subset.source);
    expect(again).toEqual(subset);
    expect(formatSubset(again)).toBe(readFileSync(FILE, 'utf8'));
    expect(subset.source.license).toMatch(/MIT/);
    expect(readFileSync(FILE).length).toBeLessThan(600 * 1024);
  });
});
