import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Ajv2020Module from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { parse as parseYaml } from 'yaml';
import { type PetstoreOptions, type RunningPetstore, startPetstore } from '../../src/petstore/server.ts';
import { readAnswer } from '../support/graphql.ts';

export const TEST_KEY = 'test-key';
export const OPENAPI_PATH = new URL('../../schema/openapi.yaml', import.meta.url).pathname;

/** A fresh directory under the OS temp dir; removed by the returned function. */
export function tempDir(): { dir: string; remove: () => void } {
  const dir = mkdtempSync(join(tmpdir(), 'petstore-test-'));
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

export interface ApiResponse {
  status: number;
  headers: Headers;
  text: string;
  /** the body after a plain JSON.parse (ids beyond 2^53 lose precision: assert those on `text`) */
  body: unknown;
}

export interface ApiRequest {
  method?: string;
  /** sent as-is when a string, JSON-encoded otherwise */
  body?: unknown;
  headers?: Record<string, string>;
  /** the Authorization header; `null` sends none. @default `Bearer test-key` */
  auth?: string | null;
  /** @default 'application/json' when there is a body; `null` sends none */
  contentType?: string | null;
}

export interface TestPetstore extends RunningPetstore {
  /** `http://127.0.0.1:port` */
  origin: string;
  /** a request to `origin + path` (path starting with /v1 or /quickstart) */
  api(path: string, request?: ApiRequest): Promise<ApiResponse>;
}

export async function api(origin: string, path: string, request: ApiRequest = {}): Promise<ApiResponse> {
  const headers: Record<string, string> = { ...request.headers };
  const auth = request.auth === undefined ? `Bearer ${TEST_KEY}` : request.auth;
  if (auth !== null) headers.authorization = auth;
  let body: string | undefined;
  if (request.body !== undefined) {
    body = typeof request.body === 'string' ? request.body : JSON.stringify(request.body);
    const contentType = request.contentType === undefined ? 'application/json' : request.contentType;
    if (contentType !== null) headers['content-type'] = contentType;
  }
  const response = await fetch(origin + path, {
    method: request.method ?? (body === undefined ? 'GET' : 'POST'),
    headers,
    ...(body === undefined ? {} : { body }),
  });
  return readAnswer(response);
}

/** Starts the real service on 127.0.0.1, port 0; `:memory:` unless `dbPath` is given. */
export async function startTestPetstore(options: Partial<PetstoreOptions> = {}): Promise<TestPetstore> {
  const running = await startPetstore({ dbPath: ':memory:', apiKey: TEST_KEY, ...options, port: 0 });
  const origin = running.url.replace(/\/v1$/, '');
  return { ...running, origin, api: (path, request) => api(origin, path, request) };
}

/** The number of pets, counted through the API (the service is seeded with fewer than 100, or not at all). */
export async function countPets(petstore: TestPetstore): Promise<number> {
  const response = await petstore.api('/v1/pets?limit=100');
  return (response.body as unknown[]).length;
}

// ajv and ajv-formats are CommonJS: under nodenext their default export sits on `.default`.
// Depending on the loader the class itself may arrive instead, hence the fallback.
const Ajv2020 = (Ajv2020Module.default ?? Ajv2020Module) as typeof Ajv2020Module.default;
const addFormats = (addFormatsModule.default ?? addFormatsModule) as typeof addFormatsModule.default;

export type OpenApiDocument = Record<string, unknown> & {
  paths: Record<string, Record<string, { responses: Record<string, unknown> }>>;
};

export function loadOpenApi(): OpenApiDocument {
  return parseYaml(readFileSync(OPENAPI_PATH, 'utf8')) as OpenApiDocument;
}

const escapePointer = (segment: string): string => segment.replaceAll('~', '~0').replaceAll('/', '~1');

/**
 * Validates response bodies against the response schema the OpenAPI document declares for
 * (path template, method, status), following `$ref`s to shared responses.
 */
export function createResponseValidator(): (
  pathTemplate: string,
  method: string,
  response: Pick<ApiResponse, 'status' | 'body'>,
) => void {
  const doc = loadOpenApi();
  const id = 'https://petstore.test/openapi.json';
  // strict: false because the whole document (paths, info...) is loaded as one schema resource.
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats(ajv);
  ajv.addSchema(doc, id);
  return (pathTemplate, method, response) => {
    const operation = doc.paths[pathTemplate]?.[method.toLowerCase()];
    if (operation === undefined) throw new Error(`no operation ${method} ${pathTemplate} in openapi.yaml`);
    const declared = operation.responses[String(response.status)] as { $ref?: string } | undefined;
    if (declared === undefined) {
      throw new Error(`openapi.yaml declares no ${response.status} for ${method} ${pathTemplate}`);
    }
    const base =
      declared.$ref ??
      `#/paths/${escapePointer(pathTemplate)}/${method.toLowerCase()}/responses/${response.status}`;
    const validate = ajv.getSchema(`${id}${base}/content/application~1json/schema`);
    if (validate === undefined) throw new Error(`no JSON schema at ${base}`);
    if (!validate(response.body)) {
      throw new Error(
        `response ${response.status} of ${method} ${pathTemplate} does not match openapi.yaml: ${ajv.errorsText(validate.errors)}`,
      );
    }
  };
}
