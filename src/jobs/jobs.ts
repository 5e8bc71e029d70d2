import type { AppDeps } from '../composition.ts';
import type { JobDefinition } from './scheduler.ts';
import { webhookDispatchJob, webhookRetentionJob } from '../delivery/jobs.ts';
import { renewalHeadsUpsJob, sendNotificationsJob } from '../modules/notifications/notifications.jobs.ts';

/**
 * Every periodic job of the service. Each entry builds its job from the dependencies, or returns null when
 * disabled by configuration. Add a job here with one line.
 */
export const JOBS: ((deps: AppDeps) => JobDefinition | null)[] = [webhookDispatchJob, webhookRetentionJob, sendNotificationsJob, renewalHeadsUpsJob];
