import { z } from 'zod';

// Friendlier messages for the two most common failures, everywhere zod validates.
z.config({
  customError: (issue) => {
    if (issue.code === 'invalid_type' && issue.input === undefined) return 'is required';
    if (issue.code === 'invalid_value' && 'values' in issue) return `must be one of ${issue.values.join(', ')}`;
    return undefined;
  },
});
