// @tier unit

import { buildSchema, type GraphQLInputObjectType, printSchema } from 'graphql';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { operationsAsTools } from '../../src/mcp/operations-as-tools.ts';
import { builtInTools } from '../../src/mcp/tools.ts';
import { schema } from '../../src/schema/index.ts';

// Tools' arguments and answers are the schema's, the built-in tools' as a manifest's: a change to the
// schema reaches them without an edit of tools.ts.

/** The schema with `NewPetInput` and `Pet` each given one more field. */
function grown() {
  const sdl = printSchema(schema)
    .replace(/input NewPetInput \{/, 'input NewPetInput {\n  """A name for friends."""\n  nickname: String')
    .replace(/type Pet \{/, 'type Pet {\n  nickname: String');
  return buildSchema(sdl);
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
