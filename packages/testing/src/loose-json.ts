/**
 * JSON a test reads without a schema: typed as loosely as supertest's `res.body`, so a test can
 * reach into an answer (`job.result[0].id`) and let its assertions check the shape. The one
 * `any` of the code base: everything else is typed, and `unknown` where the shape is not known.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- see above
export type LooseJson = any;
