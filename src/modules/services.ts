import type { ServiceDeps } from '../service-deps.ts';
import { createAssetService } from './assets/assets.service.ts';
import { createMetaService } from '../meta/meta.service.ts';
import { createToolService } from './tools/tools.service.ts';
import { createProjectService } from './projects/projects.service.ts';
import { createYardService } from './yards/yards.service.ts';
import { createAssetCheckoutService } from './assets/asset-checkout.service.ts';
import { createWorkOrderService } from './work-orders/work-orders.service.ts';
import { createRepairService } from './repairs/repairs.service.ts';
import { createWebhookService } from './webhooks/webhooks.service.ts';
import { createWebhookRecoveryService } from './webhooks/webhook-recovery.service.ts';
import { createFlagService } from './flags/flags.service.ts';
import { createHoursService } from './hours/hours.service.ts';
import { createUserService } from './users/users.service.ts';
import { createApiKeyService } from './api-keys/api-keys.service.ts';
import { createNotificationService } from './notifications/notifications.service.ts';
import { createEventService } from './events/events.service.ts';
import { createServiceTaskService } from './service-tasks/service-tasks.service.ts';
import { createServiceReminderService } from './service-reminders/service-reminders.service.ts';
import { createServiceProgramService } from './service-programs/service-programs.service.ts';
import { createTelematicsService } from './telematics/telematics.service.ts';
import { createInspectionFormService } from './inspections/inspection-forms.service.ts';
import { createInspectionService } from './inspections/inspections.service.ts';
import { createAttachmentService } from './attachments/attachments.service.ts';
import { createFuelEntryService } from './fuel-entries/fuel-entries.service.ts';
import { createExpenseService } from './expenses/expenses.service.ts';
import { createCostService } from './costs/costs.service.ts';
import { createVendorService } from './vendors/vendors.service.ts';
import { createPurchaseOrderService } from './purchase-orders/purchase-orders.service.ts';
import { createOrganizationService } from './organization/organization.service.ts';
import { createPartService } from './parts/parts.service.ts';
import { createPartInventoryService } from './parts/part-inventory.service.ts';
import { createWorkOrderLineService } from './work-orders/work-order-lines.service.ts';
import { createImportService } from './imports/imports.service.ts';

/** One instance of each service per process. Add a resource's service here. */
export function createServices(deps: ServiceDeps) {
  const hours = createHoursService(deps);
  const attachments = createAttachmentService(deps);
  return {
    meta: createMetaService(deps),
    tools: createToolService(deps),
    assets: createAssetService(deps),
    projects: createProjectService(deps),
    yards: createYardService(deps),
    assetCheckout: createAssetCheckoutService(deps),
    workOrders: createWorkOrderService(deps),
    repairs: createRepairService(deps),
    webhooks: createWebhookService(deps),
    webhookRecovery: createWebhookRecoveryService(deps),
    flags: createFlagService(deps),
    hours,
    notifications: createNotificationService(deps),
    users: createUserService(deps),
    apiKeys: createApiKeyService(deps),
    events: createEventService(deps),
    serviceTasks: createServiceTaskService(deps),
    serviceReminders: createServiceReminderService(deps),
    servicePrograms: createServiceProgramService(deps),
    telematics: createTelematicsService(deps),
    inspectionForms: createInspectionFormService(deps),
    inspections: createInspectionService(deps),
    attachments,
    fuelEntries: createFuelEntryService(deps),
    expenses: createExpenseService(deps),
    costs: createCostService(deps),
    vendors: createVendorService(deps),
    purchaseOrders: createPurchaseOrderService(deps),
    organization: createOrganizationService(deps),
    parts: createPartService(deps),
    partInventory: createPartInventoryService(deps),
    workOrderLines: createWorkOrderLineService(deps),
    imports: createImportService(deps, hours.recordBatch, attachments.storage),
  };
}

export type Services = ReturnType<typeof createServices>;
