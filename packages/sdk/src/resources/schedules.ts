import { type Core, linkedPage, unwrap } from '../core';
import { List, queryOf } from '../paging';
import type { Schedule, SchedulePreview, SchedulePreviewRequest, ScheduleRequest } from '../types';

export class Schedules {
  constructor(private readonly core: Core) {}

  /** `POST /v1/schedules`: stores the recipe and its recurrence; reserves nothing. */
  async create(body: ScheduleRequest): Promise<Schedule> {
    const { data } = await unwrap(this.core.http.POST('/v1/schedules', { body }));
    return data;
  }

  /** `GET /v1/schedules`, active and paused, across pages. */
  list(params: { limit?: number } = {}): List<Schedule> {
    return new List<Schedule>(
      (query) => linkedPage(this.core.http.GET('/v1/schedules', { params: { query: query as never } })),
      queryOf(params),
    );
  }

  /** `GET /v1/schedules/{schedule_id}`, with its recent runs. */
  async get(id: string): Promise<Schedule> {
    const { data } = await unwrap(this.core.http.GET('/v1/schedules/{schedule_id}', { params: { path: { schedule_id: id } } }));
    return data;
  }

  /** `PUT /v1/schedules/{schedule_id}`: replaces recipe and recurrence (a paused schedule stays paused). */
  async update(id: string, body: ScheduleRequest): Promise<Schedule> {
    const { data } = await unwrap(this.core.http.PUT('/v1/schedules/{schedule_id}', { params: { path: { schedule_id: id } }, body }));
    return data;
  }

  /** `DELETE /v1/schedules/{schedule_id}`. */
  async delete(id: string): Promise<void> {
    await unwrap(this.core.http.DELETE('/v1/schedules/{schedule_id}', { params: { path: { schedule_id: id } } }));
  }

  /** `POST /v1/schedules/{schedule_id}/pause`. */
  async pause(id: string): Promise<Schedule> {
    const { data } = await unwrap(this.core.http.POST('/v1/schedules/{schedule_id}/pause', { params: { path: { schedule_id: id } } }));
    return data;
  }

  /** `POST /v1/schedules/{schedule_id}/resume`. */
  async resume(id: string): Promise<Schedule> {
    const { data } = await unwrap(this.core.http.POST('/v1/schedules/{schedule_id}/resume', { params: { path: { schedule_id: id } } }));
    return data;
  }

  /** `POST /v1/schedules/{schedule_id}/run`: a manual occurrence now; its run is first in `runs`. */
  async run(id: string): Promise<Schedule> {
    const { data } = await unwrap(this.core.http.POST('/v1/schedules/{schedule_id}/run', { params: { path: { schedule_id: id } } }));
    return data;
  }

  /** `POST /v1/schedules/preview`: the next occurrences of a recurrence, as the scheduler will dispatch them. */
  async preview(body: SchedulePreviewRequest): Promise<SchedulePreview> {
    const { data } = await unwrap(this.core.http.POST('/v1/schedules/preview', { body }));
    return data;
  }
}
