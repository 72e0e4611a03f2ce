import type { RouteDef } from '../app';
import { createDestination } from './createDestination';
import { deleteDestination } from './deleteDestination';
import { getDestination } from './getDestination';
import { listDestinations } from './listDestinations';

/** Routes of destinations, the buckets jobs and batches deliver their export to (extensions-2.md 5). */
export const destinationRoutes: RouteDef[] = [
  { method: 'post', path: '/v1/destinations', handler: createDestination },
  { method: 'get', path: '/v1/destinations', handler: listDestinations },
  { method: 'get', path: '/v1/destinations/:destination_id', handler: getDestination },
  { method: 'delete', path: '/v1/destinations/:destination_id', handler: deleteDestination },
];
