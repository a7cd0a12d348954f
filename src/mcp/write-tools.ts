import { type GraphQLField, type GraphQLSchema, getNamedType, isInputObjectType } from 'graphql';
import type { WriteRoute } from '../contract/routes.ts';
import { declaredWriteRoute } from '../schema/upstream-field.ts';
import { inputShapeOf } from '../schema/zod-types.ts';
import { operationOf, selectionOf } from './documents.ts';
import { toolNameOf } from './operations-as-tools.ts';
import { type ToolSpec, writesThrough } from './tool.ts';

/*
 * One tool per mutation that declares an upstream write (`fromUpstream(writeThrough(route, …))`,
 * schema/upstream-field.ts), read off the schema as the plan reads the declaration: a mutation the
 * schema gains is offered to assistants with no edit here, as it is sent once, drops what it
 * changed from the caches and wakes live lists with no edit elsewhere.
 */

/**
 * What a write tool says whatever it changes: a model reads why its client asks first, and whether
 * a failure may have been followed by a second try, as the route's `idempotent` decides it
 * (upstream/retry.ts) and its `idempotentHint` says.
 */
const WRITE_TOOL_SENTENCES = {
  once: "It changes the store with the caller's API key and is sent once, never retried: ask the user before calling it.",
  again:
    "It changes the store with the caller's API key and may be sent again after a failure, as a repeat changes nothing more: ask the user before calling it.",
} as const;

/** Titles worded better than the field name's words; any other write tool is titled by those. */
const TITLES: Readonly<Record<string, string>> = { createPet: 'Create a pet' };

type Field = GraphQLField<unknown, unknown>;

/** `setPetStatus` → `Set pet status`. */
function titleOf(name: string): string {
  const words = toolNameOf(name).replaceAll('_', ' ');
  return words.charAt(0).toUpperCase() + words.slice(1);
}

/**
 * The input object of a field whose one argument is `input` (`createPet(input:)`): its fields are
 * the tool's arguments, one level flatter for the model than GraphQL's wrapper.
 */
function inputObjectOf(field: Field) {
  const [only] = field.args;
  if (field.args.length !== 1 || only?.name !== 'input') return undefined;
  const type = getNamedType(only.type);
  return isInputObjectType(type) ? type : undefined;
}

function writeTool(schema: GraphQLSchema, field: Field, route: WriteRoute): ToolSpec {
  const operationName = field.name.charAt(0).toUpperCase() + field.name.slice(1);
  const declared = field.args.map((arg) => `$${arg.name}: ${String(arg.type)}`).join(', ');
  const passed = field.args.map((arg) => `${arg.name}: $${arg.name}`).join(', ');
  const { text, output } = operationOf(
    schema,
    `mutation ${operationName}${declared && `(${declared})`} { ${field.name}${passed && `(${passed})`}${selectionOf(field.type)} }`,
  );
  const input = inputObjectOf(field);
  return {
    name: toolNameOf(field.name),
    title: TITLES[field.name] ?? titleOf(field.name),
    description: `${field.description ?? `The mutation \`${field.name}\`.`} ${WRITE_TOOL_SENTENCES[route.idempotent ? 'again' : 'once']}`,
    input: inputShapeOf(input ? Object.values(input.getFields()) : field.args),
    output,
    readOnly: false,
    writes: writesThrough([route]),
    request: (args) => ({ query: text, operationName, variables: input ? { input: args } : args }),
  };
}

/** A tool for each mutation of `schema` that declares an upstream write, in the schema's order. */
export function writeTools(schema: GraphQLSchema): ToolSpec[] {
  const fields = Object.values(schema.getMutationType()?.getFields() ?? {});
  return fields.flatMap((field) => {
    const route = declaredWriteRoute(field);
    return route ? [writeTool(schema, field, route)] : [];
  });
}
