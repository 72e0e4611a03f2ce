import { createJob, extractionFailed, isTerminal, renderJob, waitForJob } from '@sdx/domain/api';
import { tenantOf } from '../middleware/tenant';
import { sendJob } from './job-body';
import { jobRequest } from './job-request';
import { route } from './route';

/** Largest effective limit POST /v1/extract accepts; larger work goes through POST /v1/jobs. */
export const SYNC_LIMIT_MAX = 200;

/**
 * POST /v1/extract — runs on the worker fleet like any job and waits for it: 200 with the
 * completed job; a terminal failure answers 502 extraction_failed naming the job and the
 * cause; past SYNC_TIMEOUT_MS, or when the process starts shutting down, 202 with the job,
 * still pollable.
 */
export const extract = route('extract', {
  access: 'member',
  handler: async ({ deps: { services, draining }, req, res }, body) => {
    const { input, options } = jobRequest(req, res, body, 'POST /v1/extract');
    const created = await createJob(services, tenantOf(res), input, { ...options, maxSyncLimit: SYNC_LIMIT_MAX });
    const controller = new AbortController();
    req.on('close', () => controller.abort());
    const signal = draining ? AbortSignal.any([controller.signal, draining]) : controller.signal;
    const job = isTerminal(created.job.status)
      ? created.job
      : await waitForJob(services.db, created.job.id, services.config.syncTimeoutMs, signal);
    const flags = { deduplicated: created.deduplicated, idempotent_replay: created.idempotentReplay };
    if (job.status === 'completed') {
      await sendJob(res, services, job, flags);
      return;
    }
    if (job.status === 'failed' || job.status === 'cancelled') throw extractionFailed(job);
    res.status(202).json(renderJob(job, null, flags));
  },
});
