import type { RouteDef } from '../app';

/** Routes of batches, schedules and exports; registered after the core routes in app.ts. */
export const routeTable: RouteDef[] = [];
