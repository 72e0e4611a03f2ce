/**
 * The part of the contract a browser bundle may take: the types and enum values generated from
 * openapi.yaml, nothing that needs Node (the document's loader stays in index.ts). The console's
 * tsconfig maps `@sdx/contract` here, for its type check and for esbuild alike.
 */
export type { components, operations, paths } from './openapi';
export { WEBHOOK_EVENT_TYPES, type WebhookEventType } from './events';
