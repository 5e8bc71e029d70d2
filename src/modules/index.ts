import type { FastifyPluginAsync } from 'fastify';
import type { AppDeps } from '../composition.ts';
import { assetRoutes } from './assets/assets.routes.ts';
import { metaRoutes } from '../meta/meta.routes.ts';
import { toolRoutes } from './tools/tools.routes.ts';
import { projectRoutes } from './projects/projects.routes.ts';
import { yardRoutes } from './yards/yards.routes.ts';
import { assetCheckoutRoutes } from './assets/asset-checkout.routes.ts';
import { workOrderRoutes } from './work-orders/work-orders.routes.ts';
import { repairRoutes } from './repairs/repairs.routes.ts';
import { webhookRoutes } from './webhooks/webhooks.routes.ts';
import { flagRoutes } from './flags/flags.routes.ts';
import { hoursRoutes } from './hours/hours.routes.ts';
import { userRoutes } from './users/users.routes.ts';
import { apiKeyRoutes } from './api-keys/api-keys.routes.ts';
import { eventRoutes } from './events/events.routes.ts';
import { contractRoutes } from '../meta/contracts.routes.ts';
import { scanRoutes } from './tools/tool-scan.routes.ts';
import { docsRoutes, homeRoutes } from '../site/docs.routes.ts';
import { metricsRoutes } from '../metrics.ts';
import { serviceTaskRoutes } from './service-tasks/service-tasks.routes.ts';
import { serviceReminderRoutes } from './service-reminders/service-reminders.routes.ts';
import { serviceProgramRoutes } from './service-programs/service-programs.routes.ts';
import { telematicsRoutes } from './telematics/telematics.routes.ts';
import { inspectionFormRoutes } from './inspections/inspection-forms.routes.ts';
import { inspectionRoutes } from './inspections/inspections.routes.ts';
import { attachmentRoutes } from './attachments/attachments.routes.ts';
import { vendorRoutes } from './vendors/vendors.routes.ts';
import { purchaseOrderRoutes } from './purchase-orders/purchase-orders.routes.ts';
import { attachmentContentRoutes, attachmentUploadRoutes } from './attachments/attachment-content.routes.ts';
import { fuelEntryRoutes } from './fuel-entries/fuel-entries.routes.ts';
import { expenseRoutes } from './expenses/expenses.routes.ts';
import { costRoutes } from './costs/costs.routes.ts';
import { organizationRoutes } from './organization/organization.routes.ts';
import { partRoutes } from './parts/parts.routes.ts';
import { partInventoryRoutes } from './parts/part-inventory.routes.ts';
import { workOrderLineRoutes } from './work-orders/work-order-lines.routes.ts';
import { importRoutes } from './imports/imports.routes.ts';

/** Route plugins mounted under /api/v1, in registration order. Add a resource's routes here. */
export const API_MODULES: ((deps: AppDeps) => FastifyPluginAsync)[] = [
  metaRoutes,
  assetRoutes,
  assetCheckoutRoutes,
  projectRoutes,
  yardRoutes,
  workOrderRoutes,
  repairRoutes,
  toolRoutes,
  webhookRoutes,
  flagRoutes,
  hoursRoutes,
  userRoutes,
  apiKeyRoutes,
  eventRoutes,
  serviceTaskRoutes,
  serviceReminderRoutes,
  serviceProgramRoutes,
  telematicsRoutes,
  inspectionFormRoutes,
  inspectionRoutes,
  attachmentRoutes,
  attachmentContentRoutes,
  fuelEntryRoutes,
  expenseRoutes,
  costRoutes,
  vendorRoutes,
  purchaseOrderRoutes,
  organizationRoutes,
  partRoutes,
  partInventoryRoutes,
  workOrderLineRoutes,
  importRoutes,
];

/**
 * Route plugins mounted at the root, outside the API key chain: the home page, the documentation, contracts, the
 * public scan page, metrics.
 */
export const PUBLIC_MODULES: ((deps: AppDeps) => FastifyPluginAsync)[] = [
  homeRoutes,
  docsRoutes,
  contractRoutes,
  scanRoutes,
  attachmentUploadRoutes,
  (deps) => metricsRoutes(deps.metrics, deps.config.metricsToken),
];
