// @tier unit

import { MapperKind, mapSchema } from '@graphql-tools/utils';
import { buildSchema, GraphQLInputObjectType, GraphQLObjectType, GraphQLString, printSchema } from 'graphql';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { operationsAsTools } from '../../src/mcp/operations-as-tools.ts';
import { builtInTools } from '../../src/mcp/tools.ts';
import { schema } from '../../src/schema/index.ts';

// Tools' arguments and answers are the schema's, the built-in tools' as a manifest's: a change to the
// schema reaches them without an edit of tools.ts.

/**
 * The schema with `NewPetInput` and `Pet` each given one more field: copied type by type, so its
 * fields keep their extensions (createPet's write declaration) and the shared schema is untouched.
 */
function grown() {
  return mapSchema(schema, {
    [MapperKind.INPUT_OBJECT_TYPE]: (type) => {
      if (type.name !== 'NewPetInput') return type;
      const config = type.toConfig();
      const nickname = { type: GraphQLString, description: 'A name for friends.' };
      return new GraphQLInputObjectType({ ...config, fields: { nickname, ...config.fields } });
    },
    [MapperKind.OBJECT_TYPE]: (type) => {
      if (type.name !== 'Pet') return type;
      const config = type.toConfig();
      return new GraphQLObjectType({
        ...config,
        fields: { nickname: { type: GraphQLString }, ...config.fields },
      });
    },
  });
}

const jsonSchemaOf = (shape: z.ZodRawShape) =>
  z.toJSONSchema(z.strictObject(shape)) as unknown as {
    properties: Record<string, { description?: string }>;
    required?: string[];
  };

const toolOf = (tools: ReturnType<typeof builtInTools>, name: string) => {
  const tool = tools.find((each) => each.name === name);
  if (!tool) throw new Error(`no ${name}`);
  return tool;
};

describe('the built-in tools, from the schema', () => {
  it("take a field added to NewPetInput as create_pet's argument, described as the schema describes it", () => {
    const create = jsonSchemaOf(toolOf(builtInTools(grown(), false), 'create_pet').input);
    expect(Object.keys(create.properties).sort()).toEqual(['categoryId', 'name', 'nickname', 'status']);
    expect(create.properties.nickname?.description).toBe('A name for friends.');
    expect(create.required?.sort()).toEqual(['categoryId', 'name']);
  });

  it('send the added argument in the input, and select the field added to Pet in the answer they declare', () => {
    const create = toolOf(builtInTools(grown(), false), 'create_pet');
    const request = create.request({ name: 'Kit', categoryId: '1', nickname: 'K' });
    expect(request).toMatchObject({ variables: { input: { name: 'Kit', categoryId: '1', nickname: 'K' } } });
    expect('query' in request ? request.query : '').toMatch(
      /createPet\(input: \$input\) \{[^}]*\bnickname\b/,
    );
    const output = z.toJSONSchema(
      create.output instanceof z.ZodObject ? create.output : z.object(create.output),
    ) as unknown as {
      properties: { createPet: { properties: Record<string, unknown> } };
    };
    expect(Object.keys(output.properties.createPet.properties)).toContain('nickname');
  });
});

describe('the write tools', () => {
  it('are the mutations that declare an upstream write: one read from SDL declares none, so none is a tool', () => {
    const undeclared = builtInTools(buildSchema(printSchema(schema)), false);
    expect(undeclared.map((tool) => tool.name)).toEqual(['list_pets', 'run_query']);
    const refused = toolOf(undeclared, 'run_query').request({ query: 'mutation { createPet { id } }' });
    expect(refused).toEqual({
      refused:
        'run_query is read-only: this document holds a mutation. No tool here changes the store; subscriptions are not offered to assistants.',
    });
  });

  it("say what the schema says of the field, then what every write shares, and point run_query's refusal to them", () => {
    const tools = builtInTools(schema, false);
    const create = toolOf(tools, 'create_pet');
    const field = schema.getMutationType()?.getFields().createPet;
    expect(create.description).toBe(
      `${field?.description} It changes the store with the caller's API key and is sent once, never retried: ask the user before calling it.`,
    );
    expect(toolOf(tools, 'run_query').request({ query: 'mutation { createPet { id } }' })).toEqual({
      refused:
        'run_query is read-only: this document holds a mutation. To change the store use create_pet; subscriptions are not offered to assistants.',
    });
  });
});

describe("a manifest operation's variables", () => {
  it('are described as the argument or input field each is passed to, with its bounds', () => {
    const documents = new Map([
      ['sha256:a', 'query Sold($most: Int) { pets(status: SOLD, limit: $most) { id } }'],
      [
        'sha256:b',
        'mutation Named($name: String!, $category: ID!) { createPet(input: { name: $name, categoryId: $category }) { id } }',
      ],
    ]);
    const [sold, named] = operationsAsTools(documents, schema);
    const pets = schema.getQueryType()?.getFields().pets;
    const limit = pets?.args.find((arg) => arg.name === 'limit');
    expect(jsonSchemaOf(sold?.input ?? {}).properties.most).toMatchObject({
      description: limit?.description,
      minimum: 1,
      maximum: 100,
    });
    const newPet = schema.getType('NewPetInput') as GraphQLInputObjectType;
    const input = jsonSchemaOf(named?.input ?? {});
    expect(input.properties.name?.description).toBe(newPet.getFields().name?.description);
    expect(input.properties.category?.description).toBe(newPet.getFields().categoryId?.description);
  });
});
