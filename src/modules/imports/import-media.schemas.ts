import { z } from 'zod';
import { CreateImportBody, IMPORT_TYPES } from './imports.schemas.ts';

// OpenAPI fragments of the import routes whose bodies are not only JSON (rendered by src/contracts/openapi-rules.ts).

export const IMPORT_REQUEST_BODY = {
  required: true,
  content: {
    'multipart/form-data': {
      schema: {
        type: 'object',
        required: ['type', 'file'],
        properties: {
          type: {
            type: 'string',
            enum: [...IMPORT_TYPES],
          },
          mappingId: { type: 'string', description: 'A saved mapping (POST /imports/mappings)' },
          mapping: { type: 'string', description: 'JSON text: column header → field name (null ignores a column)' },
          options: { type: 'string', description: 'JSON text: ImportOptions' },
          file: { type: 'string', format: 'binary', description: 'The CSV file; the last part' },
        },
      },
      encoding: { file: { contentType: 'text/csv' } },
      example: {
        type: 'assets',
        options: '{"match":"customerAssetNumber","onError":"skip_rows"}',
        file: 'customerAssetNumber,nickname,assetClass\nA-100,Loader 7,off-road\n',
      },
    },
    'application/json': {
      // Inlined (an empty registry): this body is declared outside the components the routes' zod schemas make.
      schema: (({ $schema: _s, ...schema }) => schema)(
        z.toJSONSchema(CreateImportBody, { io: 'input', unrepresentable: 'any', metadata: z.registry() }),
      ),
      example: { type: 'meter_readings', uploadAttachmentId: 'att_01', options: { dateFormat: 'dd/mm/yyyy' } },
    },
  },
};

export const IMPORT_ERRORS_CSV = {
  'text/csv': {
    schema: { type: 'string', description: 'format=csv: the header, then each rejected row as it came plus error' },
    example:
      'customerAssetNumber,nickname,assetClass,error\nA-101,,off-road,"row 3: missing_value: nickname: is required"\n',
  },
};
