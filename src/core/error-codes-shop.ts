/** The storeroom's, purchasing's and costs' codes, spread into ERROR_CODES (one table, kept in two files by size). */
export const SHOP_ERROR_CODES = {
  part_number_taken: { status: [409], meaning: 'Another part of the organisation already has this number.' },
  part_not_found: { status: [409], meaning: 'The part named in the movement is not in this organisation.' },
  part_has_stock: {
    status: [409],
    meaning:
      'The part holds stock in a yard: inventory tracking cannot be switched off until it is issued or counted out.',
  },
  inventory_not_tracked: {
    status: [409],
    meaning: 'The part keeps no stock (`trackInventory: false`): nothing to move.',
  },
  insufficient_stock: {
    status: [409],
    meaning: 'The yard holds less of the part than the change takes: stock never goes below zero.',
  },
  stock_reference_invalid: {
    status: [409],
    meaning: 'The part or the yard of the movement is not in this organisation.',
  },
  yard_has_stock: {
    status: [409],
    meaning: 'The yard holds parts stock: transfer or count it out before deleting the yard.',
  },
  work_order_closed: {
    status: [409],
    meaning: 'The work order is DONE or CANCELED: it takes no new part or labour lines and none can be removed.',
  },
  vendor_name_taken: {
    status: [409],
    meaning: 'Another vendor of the organisation that is not archived has this name (compared without case).',
  },
  vendor_archived: { status: [409], meaning: 'The vendor is archived: it can be read but not changed.' },
  import_has_errors: {
    status: [409],
    meaning:
      'The import has rows in error and `onError` is `reject_all`: nothing is written (fix the file, or `skip_rows`).',
  },
  import_not_ready: {
    status: [409],
    meaning:
      'The import is not in a status that allows this: commit needs `validated`, rollback `completed` or `partially_completed`.',
  },
  import_commit_in_progress: {
    status: [409],
    meaning: 'Another import of the same type is committing in the organisation: commit again once it has ended.',
  },
  import_rollback_expired: {
    status: [409],
    meaning: 'The import completed more than 24 hours ago: it can no longer be rolled back.',
  },
  import_rows_changed: {
    status: [409],
    meaning:
      'Records the import wrote changed since (the `rows` listed), or later meter readings exist on its assets: nothing is rolled back.',
  },
  import_type_unsupported: {
    status: [422],
    meaning: 'Imports of this type are not available on this server yet.',
  },
  fuel_card_taken: {
    status: [409],
    meaning:
      'A fuel card in `fuelCardNumbers` is assigned to another asset of the organisation (`cardNumbers` lists them).',
  },
  mapping_name_taken: { status: [409], meaning: 'Another saved import mapping of the organisation has this name.' },
} as const satisfies Record<string, { status: readonly number[]; meaning: string }>;
