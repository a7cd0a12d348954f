import {
  DirectiveLocation,
  GraphQLBoolean,
  GraphQLDirective,
  type GraphQLField,
  GraphQLInt,
  GraphQLList,
  type GraphQLNamedType,
  GraphQLNonNull,
  GraphQLString,
  isCompositeType,
  Kind,
} from 'graphql';

/**
 * The GraphQL cost directives (IBM's specification, as Apollo Federation 2.9, Hive and Cosmo declare
 * them): `@cost(weight:)` on a field or a type, `@listSize(...)` on a list field. The schema carries
 * them, so a client, a linter or a router reads what each field costs from the SDL; the gateway's
 * pricing (execution/cost.ts) reads the same directives, never a table of its own.
 */
export const costDirective = new GraphQLDirective({
  name: 'cost',
  description: 'What the field, or any field of the type, weighs in an operation\u2019s cost.',
  locations: [
    DirectiveLocation.ARGUMENT_DEFINITION,
    DirectiveLocation.ENUM,
    DirectiveLocation.FIELD_DEFINITION,
    DirectiveLocation.INPUT_FIELD_DEFINITION,
    DirectiveLocation.OBJECT,
    DirectiveLocation.SCALAR,
  ],
  args: { weight: { type: new GraphQLNonNull(GraphQLInt) } },
});

export const listSizeDirective = new GraphQLDirective({
  name: 'listSize',
  description:
    'How many items the list holds for pricing: the largest slicing argument given, else assumedSize.',
  locations: [DirectiveLocation.FIELD_DEFINITION],
  args: {
    assumedSize: { type: GraphQLInt },
    slicingArguments: { type: new GraphQLList(new GraphQLNonNull(GraphQLString)) },
    sizedFields: { type: new GraphQLList(new GraphQLNonNull(GraphQLString)) },
    requireOneSlicingArgument: { type: GraphQLBoolean, defaultValue: true },
  },
});

export const COST_DIRECTIVES = [costDirective, listSizeDirective] as const;

/** The arguments of `@listSize`, as Pothos field options take them. */
export type ListSize = {
  assumedSize?: number;
  slicingArguments?: string[];
  sizedFields?: string[];
  requireOneSlicingArgument?: boolean;
};

/** The directives' types for the Pothos builder's `Directives`. */
export type CostDirectiveTypes = {
  cost: {
    locations:
      | 'ARGUMENT_DEFINITION'
      | 'ENUM'
      | 'FIELD_DEFINITION'
      | 'INPUT_FIELD_DEFINITION'
      | 'OBJECT'
      | 'SCALAR';
    args: { weight: number };
  };
  listSize: { locations: 'FIELD_DEFINITION'; args: ListSize };
};

/** What the pricing needs of one field, read once from its directives. */
export interface FieldCost {
  /** `@cost` on the field, else on its type; undefined: the specification's default. */
  readonly weight: number | undefined;
  readonly listSize: ListSize | undefined;
}

type Applied = { name: string; args?: Record<string, unknown> };

/**
 * The directives applied to a field or type: Pothos keeps them in `extensions.directives` (a list,
 * or a map by name); a schema built from SDL has them on its AST nodes only.
 */
function applied(
  element: {
    extensions?: Readonly<Record<string, unknown>> | null;
    astNode?: {
      directives?: readonly {
        name: { value: string };
        arguments?: readonly { name: { value: string }; value: unknown }[];
      }[];
    } | null;
  },
  name: string,
): Record<string, unknown> | undefined {
  const directives = element.extensions?.directives as Applied[] | Record<string, unknown> | undefined;
  if (Array.isArray(directives)) return directives.find((d) => d.name === name)?.args ?? undefined;
  if (directives && name in directives) return directives[name] as Record<string, unknown>;
  const node = element.astNode?.directives?.find((d) => d.name.value === name);
  if (!node) return undefined;
  return Object.fromEntries((node.arguments ?? []).map((a) => [a.name.value, literal(a.value)]));
}

/** A directive argument's literal (ints, booleans, strings and lists of them). */
function literal(node: unknown): unknown {
  const value = node as { kind: string; value?: string; values?: unknown[] };
  switch (value.kind) {
    case Kind.INT:
      return Number(value.value);
    case Kind.BOOLEAN:
      return (value as unknown as { value: boolean }).value;
    case Kind.STRING:
      return value.value;
    case Kind.LIST:
      return (value.values ?? []).map(literal);
    default:
      return undefined;
  }
}

const fieldCosts = new WeakMap<object, FieldCost>();

/** A field's weight and list size from its directives (its type's `@cost` when it has none). */
export function fieldCostOf(field: GraphQLField<unknown, unknown>, type: GraphQLNamedType): FieldCost {
  let cost = fieldCosts.get(field);
  if (!cost) {
    const own = applied(field, 'cost')?.weight;
    const ofType = applied(type, 'cost')?.weight;
    const weight = typeof own === 'number' ? own : typeof ofType === 'number' ? ofType : undefined;
    cost = { weight, listSize: applied(field, 'listSize') as ListSize | undefined };
    fieldCosts.set(field, cost);
  }
  return cost;
}

/** The specification's default weight of a field without `@cost`: 1 for an object, 0 for a leaf. */
export function defaultWeight(type: GraphQLNamedType): number {
  return isCompositeType(type) ? 1 : 0;
}
