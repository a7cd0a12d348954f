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

/**
 * The arguments of the directive `name` applied to a field or type, where the Pothos directives
 * plugin keeps them (`extensions.directives`, a list), as subgraph.ts sets `_entities`' too.
 */
function applied(
  element: { extensions?: Readonly<Record<string, unknown>> | null },
  name: string,
): Record<string, unknown> | undefined {
  const directives = element.extensions?.directives as
    | ReadonlyArray<{ name: string; args?: Record<string, unknown> }>
    | undefined;
  return directives?.find((directive) => directive.name === name)?.args;
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
