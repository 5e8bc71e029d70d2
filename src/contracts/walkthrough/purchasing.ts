import { okTrue, str, is, type Step } from './step.ts';

/** Walkthrough steps: vendors and purchase orders, in order. */
export const PURCHASING_STEPS: Step[] = [
  // Vendors: who parts are bought from.
  {
    operationId: 'createVendor',
    body: { name: 'Hydraulic Supply {{$timestamp}}', email: 'orders@hydraulic.example.com', accountNumber: 'ACC-991' },
    status: 201,
    save: { vendorId: 'vendorId' },
    checks: [okTrue, str('vendorId')],
  },
  {
    operationId: 'listVendors',
    query: { q: 'hydraulic', limit: '10' },
    status: 200,
    checks: [okTrue, { path: 'vendors', type: 'array' }],
  },
  {
    operationId: 'getVendor',
    params: { id: '{{vendorId}}' },
    status: 200,
    checks: [okTrue, is('vendor.id', '{{vendorId}}')],
  },
  {
    operationId: 'updateVendor',
    params: { id: '{{vendorId}}' },
    body: { phone: '+1 555 0100', notes: 'Net 30' },
    status: 200,
    checks: [okTrue],
  },
  {
    operationId: 'createVendor',
    name: 'Create a vendor to archive',
    body: { name: 'Old Supplier {{$timestamp}}' },
    status: 201,
    save: { oldVendorId: 'vendorId' },
    checks: [okTrue, str('vendorId')],
  },
  {
    operationId: 'archiveVendor',
    params: { id: '{{oldVendorId}}' },
    status: 200,
    checks: [okTrue, str('archivedAt')],
  },
];
