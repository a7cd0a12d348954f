import {
  type DocumentNode,
  type FieldNode,
  type FragmentDefinitionNode,
  type GraphQLField,
  GraphQLID,
  type GraphQLObjectType,
  type GraphQLOutputType,
  type GraphQLSchema,
  GraphQLString,
  getArgumentValues,
  getNamedType,
  isEnumType,
  isLeafType,
  isListType,
  isNonNullType,
  isObjectType,
  Kind,
  type OperationDefinitionNode,
  type SelectionSetNode,
  type VariableDefinitionNode,
} from 'graphql';
import { UPSTREAM_EXTENSION, type UpstreamCallName, type UpstreamField } from '../schema/upstream-field.ts';
import { estimateCost } from './cost.ts';

/**
 * A prepared operation compiled into the upstream calls it makes and the shape of its answer, so
 * the fast lane answers it without GraphQL execution: no resolvers, no per-field promises. Only
 * operations whose every field can be planned get one: root fields that declare what they do
 * upstream (schema/upstream-field.ts) and, below them, fields read straight off the upstream's
 * objects; no directives, one operation per document.
 *
 * A plan is data: `describePlan` prints it (test/execution/plan.test.ts pins the builder's output
 * that way) and execution/run-plan.ts interprets it. A plan never words an error: anything it does
 * not expect makes the interpreter step aside for compiled execution with the same context.
 */
export interface Plan {
  readonly operation: 'query' | 'mutation';
  /** The root fields, in the answer's order. */
  readonly roots: readonly PlannedRoot[];
  /**
   * DataLoader's order, which the resolvers' calls follow: each loader's batch goes out in the
   * order loaders were first used, its keys in the order they were asked for. A mutation's calls
   * go one after the other, in field order.
   */
  readonly callOrder: readonly UpstreamCallName[];
  /** The price when no variable can change it; undefined when it is priced per request. */
  readonly fixedCost: number | undefined;
  /** Empty when the operation has no variables: then `fixedCost` and every request are known. */
  readonly variables: readonly VariableDefinitionNode[];
  /** For what graphql-js and the pricing do per request (coercion, cost). */
  readonly schema: GraphQLSchema;
  readonly document: DocumentNode;
}

/** A root field: `__typename`, or an upstream call and the objects read from its answer. */
export type PlannedRoot =
  | { readonly kind: 'typename'; readonly key: string; readonly value: string }
  | {
      readonly kind: 'call';
      readonly key: string;
      readonly call: UpstreamCallName;
      /** The call's request, computed once when it depends on no variable. */
      readonly request?: unknown;
      readonly list: boolean;
      readonly nullable: boolean;
      readonly fields: readonly PlannedField[];
      /** What the request is built from per request: the field's declaration, definition and node. */
      readonly declaration: UpstreamField<unknown>;
      readonly field: GraphQLField<unknown, unknown>;
      readonly node: FieldNode;
    };

/** A field of an upstream object: its `__typename`, or one of its properties written as a leaf. */
export type PlannedField =
  | { readonly kind: 'typename'; readonly key: string; readonly value: string }
  | { readonly kind: 'string'; readonly key: string; readonly property: string; readonly nullable: boolean }
  | {
      readonly kind: 'enum';
      readonly key: string;
      readonly property: string;
      readonly nullable: boolean;
      /** Upstream value → the GraphQL enum value's name. */
      readonly names: ReadonlyMap<unknown, string>;
    };

/** Compiles a plan for the operation, or returns undefined when any part of it cannot be planned. */
export function compilePlan(
  schema: GraphQLSchema,
  document: DocumentNode,
  operationName: string | null | undefined,
): Plan | undefined {
  const operations = document.definitions.filter((d) => d.kind === Kind.OPERATION_DEFINITION);
  // One operation, so that pricing it (priceOperation) needs no operation name.
  if (operations.length !== 1) return undefined;
  const operation = operations[0] as OperationDefinitionNode;
  if (operationName != null && operation.name?.value !== operationName) return undefined;
  if (operation.operation === 'subscription' || hasDirectives(operation)) return undefined;
  const rootType = schema.getRootType(operation.operation);
  if (!rootType) return undefined;
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const definition of document.definitions) {
    if (definition.kind === Kind.FRAGMENT_DEFINITION) {
      if (hasDirectives(definition)) return undefined;
      fragments.set(definition.name.value, definition);
    }
  }
  const variableDefinitions = operation.variableDefinitions ?? [];
  if (variableDefinitions.some(hasDirectives)) return undefined;
  const constantVariables = variableDefinitions.length === 0;

  const roots = planSelection<PlannedRoot>(
    rootType,
    [operation.selectionSet],
    fragments,
    (key, field, node, nodes) => {
      const declaration = field.extensions?.[UPSTREAM_EXTENSION] as UpstreamField<unknown> | undefined;
      // Argument mappers (none in this schema) would hand the resolver other arguments than graphql-js's;
      // a field that maps its call's answer (`answer`) answers what only its resolver makes.
      const mappers = field.extensions?.pothosArgMappers as unknown[] | undefined;
      if (!declaration || declaration.answer || (mappers && mappers.length > 0)) return undefined;
      const shape = outputShape(field.type);
      if (!shape) return undefined;
      const selections = nodes.flatMap((n) => (n.selectionSet ? [n.selectionSet] : []));
      const fields = objectFields(shape.type, selections, fragments);
      if (!fields) return undefined;
      let request: unknown;
      if (constantVariables) {
        try {
          request = declaration.request(getArgumentValues(field, node, {}));
        } catch {
          return undefined;
        }
      }
      return {
        kind: 'call',
        key,
        call: declaration.call,
        ...(constantVariables ? { request } : {}),
        list: shape.list,
        nullable: shape.nullable,
        fields,
        declaration,
        field,
        node,
      };
    },
  );
  if (roots === undefined) return undefined;

  const fixedCost = constantVariables ? priceOperation(schema, document, {}) : undefined;
  if (constantVariables && fixedCost === undefined) return undefined;
  return {
    operation: operation.operation,
    roots,
    callOrder: [...new Set(roots.flatMap((root) => (root.kind === 'call' ? [root.call] : [])))],
    fixedCost,
    variables: variableDefinitions,
    schema,
    document,
  };
}

/**
 * The operation's estimated cost, as Yoga's lane prices it (execution/cost.ts); undefined when it
 * cannot be priced.
 */
export function priceOperation(
  schema: GraphQLSchema,
  document: DocumentNode,
  variables: Record<string, unknown>,
): number | undefined {
  try {
    return estimateCost(schema, document, variables);
  } catch {
    return undefined;
  }
}

/** A call's request as text; a write's route by its name (`POST /pets`), not its whole declaration. */
function describeRequest(request: unknown): string {
  if (typeof request !== 'object' || request === null || !('route' in request))
    return JSON.stringify(request);
  const { route, ...rest } = request as { route: { name: string } };
  return `${route.name} ${JSON.stringify(rest)}`;
}

/** The plan as text, a line a field: what the builder decided, for people and snapshot tests. */
export function describePlan(plan: Plan): string {
  const cost = plan.fixedCost === undefined ? 'priced per request' : `cost ${plan.fixedCost}`;
  const variables = plan.variables.map((definition) => `$${definition.variable.name.value}`);
  const calls = plan.callOrder.join(' then ') || 'none';
  const lines = [
    `${plan.operation}${variables.length ? `(${variables.join(', ')})` : ''}, ${cost}, calls ${calls}`,
  ];
  for (const root of plan.roots) {
    if (root.kind === 'typename') {
      lines.push(`${root.key}: ${JSON.stringify(root.value)}`);
      continue;
    }
    const request = 'request' in root ? describeRequest(root.request) : 'built from variables';
    lines.push(
      `${root.key}: ${root.call} ${request} → ${root.list ? 'list' : 'object'}${root.nullable ? ', nullable' : ''}`,
    );
    for (const field of root.fields) {
      if (field.kind === 'typename') lines.push(`  ${field.key}: ${JSON.stringify(field.value)}`);
      else
        lines.push(
          `  ${field.key}: .${field.property} as ${field.kind}${field.nullable ? ', nullable' : ''}`,
        );
    }
  }
  return lines.join('\n');
}

/** A root field's type: an object, or a list of non-null objects; undefined for anything else. */
function outputShape(
  type: GraphQLOutputType,
): { type: GraphQLObjectType; list: boolean; nullable: boolean } | undefined {
  const nullable = !isNonNullType(type);
  const inner = isNonNullType(type) ? type.ofType : type;
  if (isListType(inner)) {
    const item = inner.ofType;
    if (!isNonNullType(item) || !isObjectType(item.ofType)) return undefined;
    return { type: item.ofType, list: true, nullable };
  }
  return isObjectType(inner) ? { type: inner, list: false, nullable } : undefined;
}

/** The fields selected on an object type, if each is read straight off the upstream object. */
function objectFields(
  type: GraphQLObjectType,
  selectionSets: readonly SelectionSetNode[],
  fragments: ReadonlyMap<string, FragmentDefinitionNode>,
): PlannedField[] | undefined {
  return planSelection<PlannedField>(type, selectionSets, fragments, (key, field, _node, nodes) => {
    // A resolver or arguments would make this more than a read of the upstream's property.
    if (field.resolve || field.args.length > 0 || nodes.some((n) => n.selectionSet)) return undefined;
    const leaf = plannedLeaf(field.type);
    return leaf && { ...leaf, key, property: field.name, nullable: !isNonNullType(field.type) };
  });
}

/** How a leaf is written, as graphql-js would serialise it; only types known to be exact. */
function plannedLeaf(
  type: GraphQLOutputType,
): { kind: 'string' } | { kind: 'enum'; names: ReadonlyMap<unknown, string> } | undefined {
  const named = getNamedType(type);
  if (!isLeafType(named) || isListType(isNonNullType(type) ? type.ofType : type)) return undefined;
  // Both serialise a string as itself; anything else goes the compiled way.
  if (named === GraphQLID || named === GraphQLString) return { kind: 'string' };
  if (!isEnumType(named)) return undefined;
  return { kind: 'enum', names: new Map(named.getValues().map((value) => [value.value, value.name])) };
}

/**
 * Plans the response keys selected on `type`, in order: `__typename` from the type's name, every
 * other key by `planField` with the field it names and its nodes. Undefined when nothing is
 * selected, the selection cannot be collected (see collectFields), a key names no field, or
 * `planField` refuses one.
 */
function planSelection<Planned extends { readonly key: string }>(
  type: GraphQLObjectType,
  selectionSets: readonly SelectionSetNode[],
  fragments: ReadonlyMap<string, FragmentDefinitionNode>,
  planField: (
    key: string,
    field: GraphQLField<unknown, unknown>,
    node: FieldNode,
    nodes: readonly FieldNode[],
  ) => Planned | undefined,
): Array<Planned | { kind: 'typename'; key: string; value: string }> | undefined {
  const collected = collectFields(type, selectionSets, fragments);
  if (!collected || collected.size === 0) return undefined;
  const planned: Array<Planned | { kind: 'typename'; key: string; value: string }> = [];
  for (const [key, nodes] of collected) {
    const node = nodes[0] as FieldNode;
    if (node.name.value === '__typename') {
      planned.push({ kind: 'typename', key, value: type.name });
      continue;
    }
    const field = type.getFields()[node.name.value];
    const one = field && planField(key, field, node, nodes);
    if (!one) return undefined;
    planned.push(one);
  }
  return planned;
}

/**
 * graphql-js's CollectFields for selections without directives: response keys in the order first
 * seen, each with every node that answers to it. Undefined when a fragment's type condition is not
 * `type` itself (abstract types are not planned) or a directive appears.
 */
function collectFields(
  type: GraphQLObjectType,
  selectionSets: readonly SelectionSetNode[],
  fragments: ReadonlyMap<string, FragmentDefinitionNode>,
  into = new Map<string, FieldNode[]>(),
  visited = new Set<string>(),
): Map<string, FieldNode[]> | undefined {
  for (const selectionSet of selectionSets) {
    for (const selection of selectionSet.selections) {
      if (hasDirectives(selection)) return undefined;
      if (selection.kind === Kind.FIELD) {
        const key = (selection.alias ?? selection.name).value;
        // An answer object's own key, never its prototype (graphql-js builds on null prototypes).
        if (key === '__proto__') return undefined;
        const nodes = into.get(key);
        if (nodes) nodes.push(selection);
        else into.set(key, [selection]);
      } else if (selection.kind === Kind.INLINE_FRAGMENT) {
        if (selection.typeCondition && selection.typeCondition.name.value !== type.name) return undefined;
        if (!collectFields(type, [selection.selectionSet], fragments, into, visited)) return undefined;
      } else {
        const name = selection.name.value;
        if (visited.has(name)) continue;
        visited.add(name);
        const fragment = fragments.get(name);
        if (!fragment || fragment.typeCondition.name.value !== type.name) return undefined;
        if (!collectFields(type, [fragment.selectionSet], fragments, into, visited)) return undefined;
      }
    }
  }
  return into;
}

function hasDirectives(node: { directives?: readonly unknown[] | undefined }): boolean {
  return (node.directives?.length ?? 0) > 0;
}
