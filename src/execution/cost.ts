import {
  type DocumentNode,
  type FieldNode,
  type FragmentDefinitionNode,
  type GraphQLCompositeType,
  type GraphQLField,
  GraphQLIncludeDirective,
  type GraphQLNamedType,
  type GraphQLOutputType,
  type GraphQLSchema,
  GraphQLSkipDirective,
  getNamedType,
  getNullableType,
  getOperationAST,
  isCompositeType,
  isListType,
  isObjectType,
  Kind,
  type SelectionNode,
  type SelectionSetNode,
  type ValueNode,
  valueFromASTUntyped,
} from 'graphql';
import { defaultWeight, fieldCostOf } from '../schema/cost.ts';

/**
 * An operation's cost by the GraphQL cost directives, as Apollo Router and Hive price them: an
 * operation's base (a mutation 10), each field its weight (`@cost`, else 1 for an object and 0 for a
 * leaf) plus its selections, a list that times its size (`@listSize`: the largest slicing argument
 * given, else `assumedSize`, else LIST_SIZE). Introspection (`__schema`, `__type`, `__typename`)
 * costs nothing. The estimate prices the operation before it runs; the actual prices what came back
 * the same way, a list by the items it holds and a null by its field's weight alone.
 */

/** The size of a list with no `@listSize` to say otherwise. */
export const LIST_SIZE = 20;

const OPERATION_BASE = { query: 0, mutation: 10, subscription: 0 } as const;

type Variables = Readonly<Record<string, unknown>>;
type Fragments = ReadonlyMap<string, FragmentDefinitionNode>;

interface Walk {
  schema: GraphQLSchema;
  fragments: Fragments;
  variables: Variables;
  /** The answer's response names, when they are not the document's (actualCost). */
  names?: ReadonlyMap<string, string>;
}

/**
 * The operation `operationName` chooses, its root type, its base cost and the walk over it;
 * undefined when the document has no such operation.
 */
function operationOf(
  schema: GraphQLSchema,
  document: DocumentNode,
  variables: Variables,
  operationName: string | null | undefined,
) {
  const operation = getOperationAST(document, operationName);
  const root = operation && schema.getRootType(operation.operation);
  if (!operation || !root) return undefined;
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const definition of document.definitions) {
    if (definition.kind === Kind.FRAGMENT_DEFINITION) fragments.set(definition.name.value, definition);
  }
  const walk: Walk = { schema, fragments, variables };
  return { selections: operation.selectionSet, root, base: OPERATION_BASE[operation.operation], walk };
}

/**
 * The estimate of a valid operation: what it may cost before anything runs. `variables` are the
 * caller's, as sent (a slicing argument reads the number given). Undefined when the document has
 * no such operation.
 */
export function estimateCost(
  schema: GraphQLSchema,
  document: DocumentNode,
  variables: Variables = {},
  operationName?: string | null,
): number | undefined {
  const chosen = operationOf(schema, document, variables, operationName);
  return chosen && chosen.base + selectionCost(chosen.walk, chosen.selections, chosen.root, undefined);
}

/**
 * A selection's fragment, inline or spread, with the type it applies to; undefined when it is not
 * there or applies to no object (`typename`, an answer's type, narrows an abstract type's).
 */
function fragmentOf(
  walk: Walk,
  selection: Exclude<SelectionNode, FieldNode>,
  on: GraphQLCompositeType,
  typename?: string,
): { set: SelectionSetNode; type: GraphQLCompositeType } | undefined {
  const fragment =
    selection.kind === Kind.INLINE_FRAGMENT ? selection : walk.fragments.get(selection.name.value);
  if (!fragment) return undefined;
  const type = fragment.typeCondition ? walk.schema.getType(fragment.typeCondition.name.value) : on;
  if (!type || !isCompositeType(type)) return undefined;
  if (typename !== undefined && isObjectType(type) && type.name !== typename) return undefined;
  return { set: fragment.selectionSet, type };
}

/**
 * A named fragment's part, priced once per selection it is spread in: every spread counts, as
 * every field does, but a fragment spread n times at each of k levels costs k steps, not n^k.
 */
function spreadOnce(memo: Map<string, number>, name: string, price: () => number): number {
  let cost = memo.get(name);
  if (cost === undefined) {
    memo.set(name, 0); // a cycle (validation refuses one) prices as nothing
    cost = price();
    memo.set(name, cost);
  }
  return cost;
}

/** Whether `@skip` / `@include` leave the selection in. */
function included(
  walk: Walk,
  selection: {
    directives?: readonly {
      name: { value: string };
      arguments?: readonly { name: { value: string }; value: ValueNode }[];
    }[];
  },
): boolean {
  for (const directive of selection.directives ?? []) {
    const name = directive.name.value;
    if (name !== GraphQLSkipDirective.name && name !== GraphQLIncludeDirective.name) continue;
    const arg = directive.arguments?.find((a) => a.name.value === 'if');
    const value = arg ? valueFromASTUntyped(arg.value, walk.variables as Record<string, unknown>) : undefined;
    if (name === GraphQLSkipDirective.name && value === true) return false;
    if (name === GraphQLIncludeDirective.name && value === false) return false;
  }
  return true;
}

/** The definition of `node` on `parent`; undefined for introspection and unknown fields. */
function definitionOf(
  parent: GraphQLCompositeType,
  node: FieldNode,
): GraphQLField<unknown, unknown> | undefined {
  const name = node.name.value;
  if (name.startsWith('__') || !('getFields' in parent)) return undefined;
  return parent.getFields()[name];
}

/**
 * Every field as asked: the answer merges a field asked twice, but a field repeated 600 times is
 * a flood (its validation alone is quadratic), priced as such. Fragments are read where spread.
 * `sized`: the size a parent's `@listSize(sizedFields:)` gives the lists among these fields.
 */
function selectionCost(
  walk: Walk,
  set: SelectionSetNode,
  type: GraphQLCompositeType,
  sized: { fields: readonly string[]; size: number } | undefined,
  memo = new Map<string, number>(),
): number {
  let total = 0;
  for (const selection of set.selections) {
    if (!included(walk, selection)) continue;
    if (selection.kind === Kind.FIELD) {
      total += fieldCost(walk, selection, type, sized);
      continue;
    }
    const fragment = fragmentOf(walk, selection, type);
    if (!fragment) continue;
    const price = () => selectionCost(walk, fragment.set, fragment.type, sized, memo);
    total +=
      selection.kind === Kind.FRAGMENT_SPREAD ? spreadOnce(memo, selection.name.value, price) : price();
  }
  return total;
}

function fieldCost(
  walk: Walk,
  node: FieldNode,
  parent: GraphQLCompositeType,
  sized: { fields: readonly string[]; size: number } | undefined,
): number {
  const field = definitionOf(parent, node);
  if (!field) return 0;
  const named = getNamedType(field.type) as GraphQLNamedType;
  const { weight, listSize } = fieldCostOf(field, named);
  const size = sized?.fields.includes(field.name) ? sized.size : sizeOf(walk, field, node, listSize);
  const sizesChildren = (listSize?.sizedFields?.length ?? 0) > 0;
  const children =
    node.selectionSet && isCompositeType(named)
      ? selectionCost(
          walk,
          node.selectionSet,
          named,
          sizesChildren ? { fields: listSize?.sizedFields ?? [], size } : undefined,
        )
      : 0;
  const perItem = (weight ?? defaultWeight(named)) + children;
  return isList(field.type) && !sizesChildren ? size * perItem : perItem;
}

function isList(type: GraphQLOutputType): boolean {
  return isListType(getNullableType(type));
}

/** A list's size for the estimate: the largest slicing argument given, else its assumed size. */
function sizeOf(
  walk: Walk,
  field: GraphQLField<unknown, unknown>,
  node: FieldNode,
  listSize: { assumedSize?: number; slicingArguments?: string[] } | undefined,
): number {
  let size: number | undefined;
  for (const name of listSize?.slicingArguments ?? []) {
    const given = node.arguments?.find((a) => a.name.value === name);
    const value = given
      ? valueFromASTUntyped(given.value, walk.variables as Record<string, unknown>)
      : undefined;
    const fallback = field.args.find((a) => a.name === name)?.defaultValue;
    const n = countOf(value ?? fallback);
    if (n !== undefined) size = Math.max(size ?? 0, n);
  }
  return size ?? listSize?.assumedSize ?? LIST_SIZE;
}

/**
 * A slicing argument's size: a number as given (never below 0), a list by its length (an
 * `_entities` field's representations).
 */
function countOf(value: unknown): number | undefined {
  if (typeof value === 'number' && Number.isFinite(value)) return Math.max(0, Math.floor(value));
  if (Array.isArray(value)) return value.length;
  return undefined;
}

/**
 * The actual cost of an answer to the operation: the estimate's weights over `data` as it came
 * back. Fields absent from `data` (deferred, not yet sent) cost nothing.
 */
export function actualCost(
  schema: GraphQLSchema,
  document: DocumentNode,
  data: unknown,
  variables: Variables = {},
  operationName?: string | null,
  /** `data` is written under another document's response names (fast-lane/by-shape.ts): each of this one's to its. */
  names?: ReadonlyMap<string, string>,
): number | undefined {
  const chosen = operationOf(schema, document, variables, operationName);
  if (!chosen) return undefined;
  const walk = names ? { ...chosen.walk, names } : chosen.walk;
  return chosen.base + (data == null ? 0 : answeredCost(walk, chosen.selections, chosen.root, data));
}

function answeredCost(
  walk: Walk,
  set: SelectionSetNode,
  type: GraphQLCompositeType,
  value: unknown,
  memo?: Map<string, number>,
): number {
  if (typeof value !== 'object' || value === null) return 0;
  const object = value as Record<string, unknown>;
  const plain = walk.names ? undefined : plainFieldsOf(set, type);
  if (plain) return plainCost(walk, plain, object);
  const typename = typeof object.__typename === 'string' ? object.__typename : undefined;
  let total = 0;
  for (const selection of set.selections) {
    if (!included(walk, selection)) continue;
    if (selection.kind !== Kind.FIELD) {
      const fragment = fragmentOf(walk, selection, type, typename);
      if (!fragment) continue;
      const spreads = memo ?? new Map<string, number>();
      const price = () => answeredCost(walk, fragment.set, fragment.type, object, spreads);
      total +=
        selection.kind === Kind.FRAGMENT_SPREAD ? spreadOnce(spreads, selection.name.value, price) : price();
      continue;
    }
    const field = definitionOf(type, selection);
    const own = selection.alias?.value ?? selection.name.value;
    const key = walk.names ? (walk.names.get(own) ?? own) : own;
    if (!field || !(key in object)) continue;
    const named = getNamedType(field.type) as GraphQLNamedType;
    const weight = fieldCostOf(field, named).weight ?? defaultWeight(named);
    const below = selection.selectionSet;
    const item = (v: unknown) =>
      weight + (v != null && below && isCompositeType(named) ? answeredCost(walk, below, named, v) : 0);
    const answered = object[key];
    total += Array.isArray(answered) ? answered.reduce((sum: number, v) => sum + item(v), 0) : item(answered);
  }
  return total;
}

/** A field of a selection set with neither fragments nor directives, read once for every answer. */
interface PlainField {
  readonly key: string;
  readonly weight: number;
  readonly below: SelectionSetNode | undefined;
  readonly named: GraphQLCompositeType | undefined;
}

/**
 * A set of plain fields (no fragment, no directive: most sets), as the walk reads each one, made
 * once per set and type: an answer's every list item is priced by the same set, and working out
 * each field's definition, type and weight again per item was most of the actual's cost.
 */
const plainSets = new WeakMap<SelectionSetNode, Map<GraphQLCompositeType, readonly PlainField[] | null>>();

function plainFieldsOf(set: SelectionSetNode, type: GraphQLCompositeType): readonly PlainField[] | undefined {
  let byType = plainSets.get(set);
  if (!byType) {
    byType = new Map();
    plainSets.set(set, byType);
  }
  let fields = byType.get(type);
  if (fields === undefined) {
    fields = plainOf(set, type);
    byType.set(type, fields);
  }
  return fields ?? undefined;
}

function plainOf(set: SelectionSetNode, type: GraphQLCompositeType): readonly PlainField[] | null {
  const fields: PlainField[] = [];
  for (const selection of set.selections) {
    if (selection.kind !== Kind.FIELD || selection.directives?.length) return null;
    const field = definitionOf(type, selection);
    if (!field) continue;
    const named = getNamedType(field.type) as GraphQLNamedType;
    fields.push({
      key: selection.alias?.value ?? selection.name.value,
      weight: fieldCostOf(field, named).weight ?? defaultWeight(named),
      below: selection.selectionSet,
      named: isCompositeType(named) ? named : undefined,
    });
  }
  return fields;
}

function plainCost(walk: Walk, fields: readonly PlainField[], object: Record<string, unknown>): number {
  let total = 0;
  for (const { key, weight, below, named } of fields) {
    if (!(key in object)) continue;
    const answered = object[key];
    if (!Array.isArray(answered)) {
      total += weight + (answered != null && below && named ? answeredCost(walk, below, named, answered) : 0);
      continue;
    }
    for (const item of answered)
      total += weight + (item != null && below && named ? answeredCost(walk, below, named, item) : 0);
  }
  return total;
}
