import type { DeliveryStatus } from '@sdx/db';

/** The delivery columns of a job or batch row (migration 0027). */
export interface DeliveryColumns {
  destination_id: string | null;
  delivery_status: DeliveryStatus | null;
  delivery_key: string | null;
  delivery_attempts: number;
  delivery_error: string | null;
  delivered_at: Date | null;
}

/** The `delivery` of a Job or Batch: null without a destination. */
export function renderDelivery(row: DeliveryColumns) {
  if (row.destination_id === null || row.delivery_status === null) return null;
  return {
    destination_id: row.destination_id,
    status: row.delivery_status,
    key: row.delivery_key ?? '',
    attempts: row.delivery_attempts,
    error: row.delivery_error,
    delivered_at: row.delivered_at ? row.delivered_at.toISOString() : null,
  };
}
