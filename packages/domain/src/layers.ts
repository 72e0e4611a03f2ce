/**
 * The layers of the domain, bottom first (docs/architecture.md "Layers"). A unit is a folder of
 * src/ or a file directly in it; each unit is in exactly one layer. A module imports only from
 * its own layer or from a lower one, type imports included, and the units import each other
 * without a cycle (value imports). packages/testing/test/domain-structure.test.ts checks all three.
 */
export const DOMAIN_LAYERS: readonly { name: string; units: readonly string[] }[] = [
  {
    // Plumbing every module may use: errors, ids, the clock, the resources a process is built
    // from, transactions and group commits, paging, sealing, the payment gateway's port; and this table.
    name: 'kernel',
    units: [
      'errors.ts',
      'ids.ts',
      'time.ts',
      'resources.ts',
      'tx.ts',
      'group-commit.ts',
      'paging.ts',
      'sealing.ts',
      'payment-gateway.ts',
      'layers.ts',
    ],
  },
  {
    // What the processes write and read: the ledger (credits, postings, reservations), the
    // outboxes (webhook events, mail), audit, idempotency, roles, emails and tokens, sources'
    // health, destinations' rows and renderers.
    name: 'records',
    units: ['audit', 'credits', 'idempotency', 'identity', 'secrets', 'sources', 'mail', 'webhooks', 'destinations'],
  },
  {
    // The processes: billing (with its triggers), the job lifecycle, admission, batches,
    // workspaces and keys, accounts, OAuth, schedules, monitors, and the services bundle.
    name: 'process',
    units: ['billing', 'jobs', 'admission', 'batches', 'workspaces', 'accounts', 'oauth', 'schedules', 'monitors', 'context.ts'],
  },
  {
    // What leaves the service after the processes wrote it: webhook dispatch, destination
    // deliveries, the mail sender; and the retention sweep.
    name: 'outbound',
    units: ['delivery', 'retention'],
  },
  {
    // The declared entry points the apps and other packages import (package.json "exports").
    name: 'entry',
    units: ['entry'],
  },
];
