import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { AppDeps } from '../../composition.ts';
import type { Scope } from '../../core/context.ts';
import { contextOf } from '../../core/context.ts';
import { ErrorResponse, IdParams } from '../../core/schemas.ts';
import type { PurchaseOrderAction } from './purchase-orders.rules.ts';
import {
  CreatePurchaseOrderBody,
  CreatePurchaseOrderResponse,
  ListPurchaseOrdersQuery,
  ListPurchaseOrdersResponse,
  PurchaseOrderDetailResponse,
  PurchaseOrderIdResponse,
  PurchaseOrderStatusResponse,
  ReceiptBody,
  ReceiptResponse,
  UpdatePurchaseOrderBody,
} from './purchase-orders.schemas.ts';

const MOVE_CONFLICT = ErrorResponse.describe('invalid_status_transition: the order is not in a status this move takes');

/** The action endpoints: the move, its operationId, its scope and what it does. */
const ACTIONS: { action: PurchaseOrderAction; operationId: string; scope: Scope; summary: string }[] = [
  {
    action: 'submit',
    operationId: 'submitPurchaseOrder',
    scope: 'purchasing:write',
    summary: 'Submit a DRAFT order for approval (422 without a vendor, a yard and a line)',
  },
  {
    action: 'approve',
    operationId: 'approvePurchaseOrder',
    scope: 'purchasing:approve',
    summary: 'Approve a SUBMITTED order; goods can then be received',
  },
  {
    action: 'reject',
    operationId: 'rejectPurchaseOrder',
    scope: 'purchasing:approve',
    summary: 'Reject a SUBMITTED order (final)',
  },
  {
    action: 'cancel',
    operationId: 'cancelPurchaseOrder',
    scope: 'purchasing:write',
    summary: 'Cancel a DRAFT, SUBMITTED or APPROVED order (final)',
  },
  {
    action: 'close',
    operationId: 'closePurchaseOrder',
    scope: 'purchasing:write',
    summary: 'Close a RECEIVED order (final)',
  },
];

export const purchaseOrderRoutes =
  ({ services }: AppDeps): FastifyPluginAsyncZod =>
  async (app) => {
    const orders = services.purchaseOrders;
    const tags = ['purchase-orders'];

    app.get(
      '/purchase-orders',
      {
        config: { scope: 'purchasing:read' },
        schema: {
          operationId: 'listPurchaseOrders',
          tags,
          summary: 'List purchase orders, newest first',
          querystring: ListPurchaseOrdersQuery,
          response: { 200: ListPurchaseOrdersResponse },
        },
      },
      (req) => orders.list(contextOf(req), req.query),
    );

    app.post(
      '/purchase-orders',
      {
        config: { scope: 'purchasing:write' },
        schema: {
          operationId: 'createPurchaseOrder',
          tags,
          summary: 'Create a DRAFT purchase order, numbered 1, 2, 3... in the organisation',
          body: CreatePurchaseOrderBody,
          response: { 201: CreatePurchaseOrderResponse },
        },
      },
      async (req, reply) => reply.code(201).send(await orders.create(contextOf(req), req.body)),
    );

    app.get(
      '/purchase-orders/:id',
      {
        config: { scope: 'purchasing:read' },
        schema: {
          operationId: 'getPurchaseOrder',
          tags,
          summary: 'Purchase order detail with its lines, what each has received, and the totals',
          params: IdParams,
          response: { 200: PurchaseOrderDetailResponse },
        },
      },
      (req) => orders.get(contextOf(req), req.params.id),
    );

    app.patch(
      '/purchase-orders/:id',
      {
        config: { scope: 'purchasing:write' },
        schema: {
          operationId: 'updatePurchaseOrder',
          tags,
          summary: 'Change a DRAFT order (lines replace the whole list); 409 in any other status',
          params: IdParams,
          body: UpdatePurchaseOrderBody,
          response: { 200: PurchaseOrderIdResponse, 409: MOVE_CONFLICT },
        },
      },
      (req) => orders.update(contextOf(req), req.params.id, req.body),
    );

    for (const { action, operationId, scope, summary } of ACTIONS) {
      app.post(
        `/purchase-orders/:id/${action}`,
        {
          config: { scope },
          schema: {
            operationId,
            tags,
            summary,
            params: IdParams,
            response: { 200: PurchaseOrderStatusResponse, 409: MOVE_CONFLICT },
          },
        },
        (req) => orders[action](contextOf(req), req.params.id),
      );
    }

    app.post(
      '/purchase-orders/:id/receipts',
      {
        config: { scope: 'purchasing:write' },
        schema: {
          operationId: 'receivePurchaseOrder',
          tags,
          summary: 'Receive goods: stock rises in the order’s yard; 422 past what was ordered',
          params: IdParams,
          body: ReceiptBody,
          response: {
            201: ReceiptResponse,
            409: ErrorResponse.describe('invalid_status_transition: the order is not APPROVED or PARTIALLY_RECEIVED'),
          },
        },
      },
      async (req, reply) => reply.code(201).send(await orders.receive(contextOf(req), req.params.id, req.body)),
    );
  };
