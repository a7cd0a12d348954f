// @tier integration

import { readFileSync, realpathSync } from 'node:fs';
import { createRequire } from 'node:module';
import { printSubgraphSchema } from '@apollo/subgraph';
import { GraphQLClient } from 'graphql-request';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PET_SUNSET_DAY } from '../../src/contract/animal-store.ts';
import { schema } from '../../src/schema/index.ts';
import { printSdl } from '../../src/schema/sdl.ts';
import { subgraph } from '../../src/schema/subgraph.ts';
import { type FakeUpstream, startFakeUpstream } from '../support/fake-upstream.ts';
import { type RunningGateway, startGateway } from '../support/gateway.ts';
import { postJson } from '../support/graphql.ts';
import { CreatePet, ListPets } from '../support/operations.ts';

describe('schema artefact', () => {
  it('schema/schema.graphql is exactly the printed schema (run npm run schema:print after a change)', () => {
    const committed = readFileSync(new URL('../../schema/schema.graphql', import.meta.url), 'utf8');
    expect(committed).toBe(`${printSdl(schema)}\n`);
  });

  it('schema/subgraph.graphql is exactly the printed subgraph SDL (npm run schema:print too)', () => {
    const committed = readFileSync(new URL('../../schema/subgraph.graphql', import.meta.url), 'utf8');
    expect(committed).toBe(`${printSubgraphSchema(subgraph().schema)}\n`);
    expect(subgraph().sdl).toBe(printSubgraphSchema(subgraph().schema));
  });

  it('the public schema has nothing of federation: the subgraph is a second schema', () => {
    const federationOnly = ['_Any', '_Entity', '_Service', '_FieldSet', 'link__Import'];
    for (const name of federationOnly) expect(schema.getType(name)).toBeUndefined();
    expect(Object.keys(schema.getQueryType()?.getFields() ?? {})).toEqual(['pet', 'pets']);
    expect(Object.keys(subgraph().schema.getQueryType()?.getFields() ?? {})).toEqual([
      '_entities',
      '_service',
      'pet',
      'pets',
    ]);
  });

  it('has one graphql instance: Yoga, Pothos, graphql-armor, codegen and every plugin resolve the same file', () => {
    const ours = realpathSync(createRequire(import.meta.url).resolve('graphql'));
    for (const plugin of [
      'graphql-yoga',
      '@pothos/core',
      '@graphql-codegen/cli',
      '@escape.tech/graphql-armor-max-depth',
      '@escape.tech/graphql-armor-max-aliases',
      '@escape.tech/graphql-armor-max-directives',
      '@escape.tech/graphql-armor-max-tokens',
      '@apollo/client',
      '@urql/core',
      '@graphql-yoga/plugin-prometheus',
      'graphql-http',
      'graphql-jit',
      '@pothos/plugin-directives',
      '@pothos/plugin-federation',
      '@apollo/subgraph',
      '@theguild/federation-composition',
      '@graphql-hive/gateway-runtime',
      '@graphql-mesh/transport-http',
    ]) {
      const fromPlugin = createRequire(createRequire(import.meta.url).resolve(plugin)).resolve('graphql');
      expect(realpathSync(fromPlugin)).toBe(ours);
    }
  });
});

describe('over HTTP', () => {
  let upstream: FakeUpstream;
  let gateway: RunningGateway;
  beforeAll(async () => {
    upstream = await startFakeUpstream();
    upstream.tokens.add('t');
    gateway = await startGateway({ upstreamUrl: upstream.url });
  });
  afterAll(async () => {
    await gateway.close();
    await upstream.close();
  });

  it('introspection shows pet(id) deprecated, naming the replacement and the sunset date', async () => {
    const result = await postJson<{
      __type: { fields: Array<{ name: string; isDeprecated: boolean; deprecationReason: string | null }> };
    }>(gateway.url, {
      query:
        '{ __type(name: "Query") { fields(includeDeprecated: true) { name isDeprecated deprecationReason } } }',
    });
    const pet = result.data?.__type.fields.find((field) => field.name === 'pet');
    expect(pet?.isDeprecated).toBe(true);
    expect(pet?.deprecationReason).toContain('pets(status:, limit:)');
    expect(pet?.deprecationReason).toContain(PET_SUNSET_DAY);
    const pets = result.data?.__type.fields.find((field) => field.name === 'pets');
    expect(pets?.isDeprecated).toBe(false);
  });

  it('the docs pane says what a front-end developer needs: limit’s default, and what the replacement of pet(id) cannot do', async () => {
    type Field = {
      name: string;
      description: string | null;
      deprecationReason: string | null;
      args: Array<{ name: string; description: string | null; defaultValue: string | null }>;
    };
    const result = await postJson<{ __type: { fields: Field[] } }>(gateway.url, {
      query:
        '{ __type(name: "Query") { fields(includeDeprecated: true) { name description deprecationReason args { name description defaultValue } } } }',
    });
    const field = (name: string) => result.data?.__type.fields.find((candidate) => candidate.name === name);
    const limit = field('pets')?.args.find((arg) => arg.name === 'limit');
    expect(limit?.defaultValue).toBe('20');
    expect(limit?.description).toContain('default 20');
    // The contract's replacement, GET /pets with its status filter, has no id lookup and no paging.
    const pet = field('pet');
    expect(pet?.description).toContain('pets(status:, limit:)');
    expect(pet?.description).toMatch(/cannot look an animal up by id/);
    expect(pet?.description).toMatch(/100/);
    expect(pet?.description).toContain(PET_SUNSET_DAY);
    // The reason travels with every answer that ran pet(id): one sentence, pointing to the rest.
    expect(pet?.deprecationReason).toContain('pets(status:, limit:)');
    expect(pet?.deprecationReason).toMatch(/cannot find a pet by id/);
    expect(pet?.deprecationReason).toContain(PET_SUNSET_DAY);
    expect(pet?.deprecationReason).toContain('README.md#deprecation-timeline');
  });

  it('every type, field and argument has a description', async () => {
    const result = await postJson<{
      __schema: {
        types: Array<{
          name: string;
          description: string | null;
          fields: Array<{
            name: string;
            description: string | null;
            args: Array<{ name: string; description: string | null }>;
          }> | null;
          inputFields: Array<{ name: string; description: string | null }> | null;
          enumValues: Array<{ name: string; description: string | null }> | null;
        }>;
      };
    }>(gateway.url, {
      query: `{ __schema { types { name description
        fields(includeDeprecated: true) { name description args { name description } }
        inputFields { name description } enumValues { name description } } } }`,
    });
    const ours = result.data?.__schema.types.filter(
      (type) =>
        !type.name.startsWith('__') && !['String', 'Int', 'ID', 'Boolean', 'Float'].includes(type.name),
    );
    expect(ours?.map((type) => type.name).sort()).toEqual([
      'Mutation',
      'NewPetInput',
      'Pet',
      'PetStatus',
      'Query',
      'Subscription',
    ]);
    const missing: string[] = [];
    for (const type of ours ?? []) {
      if (!type.description) missing.push(type.name);
      for (const field of type.fields ?? []) {
        if (!field.description) missing.push(`${type.name}.${field.name}`);
        for (const arg of field.args)
          if (!arg.description) missing.push(`${type.name}.${field.name}(${arg.name})`);
      }
      for (const field of [...(type.inputFields ?? []), ...(type.enumValues ?? [])]) {
        if (!field.description) missing.push(`${type.name}.${field.name}`);
      }
    }
    expect(missing).toEqual([]);
  });

  it('a real GraphQL client (graphql-request) runs the mutation and a query', async () => {
    const client = new GraphQLClient(gateway.url, { headers: { authorization: 'Bearer t' } });
    const { createPet } = await client.request(CreatePet, {
      input: { name: 'Client pet', categoryId: '42', status: 'AVAILABLE' },
    });
    expect(createPet).toMatchObject({ name: 'Client pet', categoryId: '42', status: 'AVAILABLE' });
    const { pets } = await client.request(ListPets, { status: 'AVAILABLE', limit: 10 });
    expect(pets).toEqual([createPet]);
  });
});
