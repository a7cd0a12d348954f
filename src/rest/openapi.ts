import { type GraphQLInputType, getNullableType, isEnumType, isScalarType } from 'graphql';
import { z } from 'zod';
import { inputSchemaOf } from '../schema/zod-types.ts';
import type { RestOperation } from './operations.ts';
import { FORM_PARAMETERS } from './parameters.ts';

/*
 * The REST endpoints as an OpenAPI 3.1 document (`GET /rest/openapi.json`), derived from the
 * operations themselves: each variable a parameter typed as the schema types it, each answer the
 * shape its selection gives `data`. Tools (Postman, Swagger UI, a partner's client generator)
 * read it; nothing in it is written by hand.
 */

/** A zod schema as the JSON Schema 2020-12 OpenAPI 3.1 embeds (no `$schema` of its own). */
function jsonSchemaOf(schema: z.ZodType): Record<string, unknown> {
  const { $schema: _dialect, ...rest } = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' });
  return rest;
}

/** A query parameter's schema: a scalar or an enum, as parameters.ts reads it. */
function parameterSchemaOf(type: GraphQLInputType): Record<string, unknown> {
  const named = getNullableType(type);
  if (isScalarType(named) || isEnumType(named)) return jsonSchemaOf(inputSchemaOf(named));
  return { type: 'string', description: 'an object: not a query parameter (POST to /graphql instead)' };
}

const ERRORS = {
  type: 'object',
  required: ['errors'],
  properties: {
    errors: {
      type: 'array',
      items: {
        type: 'object',
        required: ['message'],
        properties: {
          message: { type: 'string' },
          extensions: { type: 'object', properties: { code: { type: 'string' } } },
        },
      },
    },
  },
};

const REFUSED = { 'application/json': { schema: { $ref: '#/components/schemas/Errors' } } };

function pathOf(operation: RestOperation): Record<string, unknown> {
  const data = jsonSchemaOf(operation.output);
  const json = {
    'application/json': {
      schema: { type: 'object', properties: { data, errors: ERRORS.properties.errors } },
    },
  };
  const answers = operation.method === 'GET' ? { ...json, 'text/csv': { schema: { type: 'string' } } } : json;
  const variables = operation.parameters.map((parameter) => ({
    name: parameter.name,
    in: 'query',
    required: parameter.required,
    schema: parameterSchemaOf(parameter.type),
  }));
  const body = {
    type: 'object',
    additionalProperties: false,
    properties: Object.fromEntries(
      operation.parameters.map((parameter) => [parameter.name, jsonSchemaOf(inputSchemaOf(parameter.type))]),
    ),
    required: operation.parameters
      .filter((parameter) => parameter.required)
      .map((parameter) => parameter.name),
  };
  return {
    [operation.method.toLowerCase()]: {
      operationId: operation.name,
      summary: operation.description ?? `The trusted document ${operation.name}`,
      ...(operation.method === 'GET'
        ? {
            parameters: [
              ...variables,
              ...[...FORM_PARAMETERS].map((name) => ({
                name,
                in: 'query',
                required: false,
                description: '`csv` for a list as CSV (or send Accept: text/csv)',
                schema: { type: 'string', enum: ['json', 'csv'] },
              })),
            ],
          }
        : {
            requestBody: {
              required: body.required.length > 0,
              content: { 'application/json': { schema: body } },
            },
          }),
      responses: {
        '200': { description: 'The answer: `data`, and `errors` for what failed', content: answers },
        ...(operation.method === 'GET' ? { '304': { description: 'Unchanged since the ETag sent' } } : {}),
        '400': { description: 'A parameter the operation cannot take', content: REFUSED },
        '401': { description: 'No API key, or one the animal store refused', content: REFUSED },
        '429': { description: 'Over the rate limit', content: REFUSED },
      },
    },
  };
}

/** The document, with every operation's path under `/rest/`. */
export function openApiOf(operations: Iterable<RestOperation>): Record<string, unknown> {
  const paths: Record<string, unknown> = {};
  for (const operation of operations) paths[`/rest/${operation.name}`] = pathOf(operation);
  return {
    openapi: '3.1.0',
    info: {
      title: 'pet-gateway: trusted documents as REST',
      version: '1',
      description:
        'Each named operation of the trusted-documents manifest, run with the caller key as a GraphQL request is (every limit, the cost, the rate limit).',
    },
    security: [{ apiKey: [] }],
    paths,
    components: {
      securitySchemes: {
        apiKey: { type: 'http', scheme: 'bearer', description: 'Your animal store API key' },
      },
      schemas: { Errors: ERRORS },
    },
  };
}
