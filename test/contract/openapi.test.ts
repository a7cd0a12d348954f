// @tier integration

import { describe, expect, it } from 'vitest';
import * as contract from '../../src/contract/animal-store.ts';
import {
  INT64_MAX,
  INT64_MIN,
  isPetStatus,
  LIST_LIMIT,
  PET_STATUSES,
  PET_SUNSET,
} from '../../src/contract/animal-store.ts';
import { REFERENCE_NAME, referenceNameLength } from '../../src/petstore/names.ts';
import { loadOpenApi } from '../petstore/helpers.ts';

// biome-ignore lint/suspicious/noExplicitAny: a parsed YAML document, walked by the paths the contract names
const doc = loadOpenApi() as any;
const listPets = doc.paths['/pets'].get;
const getPet = doc.paths['/pets/{petId}'].get;
const parameter = (operation: { parameters: Array<{ name: string; schema: unknown }> }, name: string) =>
  operation.parameters.find((entry) => entry.name === name)?.schema;

describe('src/contract/ against schema/openapi.yaml', () => {
  it("GET /pets's limit: bounds and default", () => {
    expect(parameter(listPets, 'limit')).toMatchObject({
      type: 'integer',
      minimum: LIST_LIMIT.min,
      maximum: LIST_LIMIT.max,
      default: LIST_LIMIT.default,
    });
  });

  it('PetStatus: the same values in the same order', () => {
    expect(doc.components.schemas.PetStatus.enum).toEqual([...PET_STATUSES]);
    expect(PET_STATUSES.every(isPetStatus)).toBe(true);
    expect(['', 'Available', 'lost', null, 1].some(isPetStatus)).toBe(false);
  });

  it("a pet's name: the document states no length or format limits, so neither does the contract", () => {
    // "Length and format limits of `name`: not shown": a bound here would refuse names a real
    // animal store accepts. The reference service's own bounds ride along as an `x-` note.
    expect(Object.keys(contract).filter((name) => /NAME/i.test(name))).toEqual([]);
    for (const schema of [doc.components.schemas.NewPet, doc.components.schemas.Pet]) {
      expect(schema.properties.name.type).toBe('string');
      expect(schema.properties.name).not.toHaveProperty('minLength');
      expect(schema.properties.name).not.toHaveProperty('maxLength');
      expect(schema.properties.name['x-reference-service']).toEqual({
        minLength: REFERENCE_NAME.min,
        maxLength: REFERENCE_NAME.max,
      });
    }
  });

  it("the reference service counts a name's code points after trimming, and no further than it needs", () => {
    expect(referenceNameLength('  Rex  ')).toBe(3);
    expect(referenceNameLength('🐕'.repeat(REFERENCE_NAME.max))).toBe(REFERENCE_NAME.max);
    expect(referenceNameLength('x'.repeat(1_000_000))).toBe(REFERENCE_NAME.max + 1);
  });

  it('ids: int64 wherever the document has one, and the bounds are int64’s', () => {
    const schemas = doc.components.schemas;
    for (const format of [
      schemas.Pet.properties.id.format,
      schemas.Pet.properties.categoryId.format,
      schemas.NewPet.properties.categoryId.format,
      parameter(getPet, 'petId') && (parameter(getPet, 'petId') as { format: string }).format,
    ]) {
      expect(format).toBe('int64');
    }
    expect([INT64_MIN, INT64_MAX]).toEqual([
      BigInt.asIntN(64, 1n << 63n),
      BigInt.asIntN(64, (1n << 63n) - 1n),
    ]);
  });

  it('GET /pets/{petId}: deprecated, with the sunset day and header', () => {
    expect(getPet.deprecated).toBe(true);
    expect(getPet['x-sunset']).toBe(PET_SUNSET.toISOString().slice(0, 10));
    expect(doc.components.headers.Sunset.schema.const).toBe(PET_SUNSET.toUTCString());
  });
});
