import {
  type DirectiveNode,
  type DocumentNode,
  type ExecutionArgs,
  type ExecutionResult,
  type FieldNode,
  type FragmentDefinitionNode,
  GraphQLError,
  getOperationAST,
  Kind,
  type SelectionSetNode,
} from 'graphql';
import { type CompiledQuery, compileQuery, isCompiledQuery } from 'graphql-jit';
import type { Plugin } from 'graphql-yoga';
import { createLru, type Lru, type LruBounds } from '../stores/lru.ts';

type Compiled = CompiledQuery | 'interpret';

/** A document's executions so far, per operation name, until it is compiled. */
type Runs = Map<string, number>;

/** A document's compiled forms, per operation name. */
type Forms = ReadonlyMap<string, Compiled>;

/**
 * Documents whose compiled forms are kept, least recently run first. A compiled form holds its
 * document, so the documents kept here are weighed here, whatever else keeps them.
 */
export const COMPILED_CACHE: LruBounds = { entries: 512, bytes: 16 * 1024 * 1024 };

/**
 * What a compiled form weighs on the heap: graphql-jit's generated code and closures (~16 KiB for
 * the smallest operation) and, per character of the document, its parse and the code per field.
 */
const formBytes = (document: DocumentNode, form: Compiled): number =>
  form === 'interpret' ? 64 : 16 * 1024 + 300 * (document.loc?.end ?? MAX_DOCUMENT_LENGTH);

/** A document's length when it has no locations to tell it: the longest the fast lane prepares. */
const MAX_DOCUMENT_LENGTH = 8192;

/**
 * A document must run this many times before it is compiled. Compiling costs far more than one
 * interpreted run (2–7 ms for small documents here, against well under 1 ms), so documents seen
 * once (the cold workload, a flood of unique hostile documents) never pay for it; the documents an
 * app sends over and over do.
 */
const RUNS_BEFORE_COMPILE = 2;

/**
 * Operation names remembered per document. The name comes from the request, so without a bound
 * one cached document sent with endless made-up operation names would grow its entry forever;
 * names beyond this are interpreted and not remembered.
 */
const MAX_NAMES_PER_DOCUMENT = 16;

/**
 * Documents whose selections, with every fragment spread expanded, hold more fields than this are
 * never compiled: graphql-jit inlines fragments and generates code per field, so a hostile document
 * of many fragment spreads costs seconds to compile (test/hardening/flood.test.ts). Counting stops
 * at the bound, so the check itself is cheap. Real operations are far smaller.
 */
const MAX_COMPILED_FIELDS = 400;

/** What createCompiledExecution gives Yoga's lane and the preparation plugin. */
export interface CompiledExecution {
  /** The envelop plugin; must come before plugins that wrap the execute function (tracing). */
  plugin: Plugin;
  /** The compiled form of an operation, once it has one. */
  compiledFor(document: DocumentNode, operationName: string | null | undefined): CompiledQuery | undefined;
}

/**
 * Executes repeated documents with graphql-jit: the document is compiled once into a function
 * that calls the resolvers directly, skipping graphql-js's per-field work (a ResolveInfo object
 * and argument coercion for every field of every list item). Keyed by the parsed document, which
 * the parse cache hands back for the same query text, and by operation name (one document may hold
 * several operations). Anything graphql-jit cannot compile keeps graphql-js, and so do requests
 * that fail before any resolver runs (bad variables): graphql-js words those errors.
 *
 * Must come before plugins that wrap the execute function (tracing), so they wrap this one.
 * `executedElsewhere` returns a result already computed for a request (by the fast lane, which
 * hands results with errors to Yoga to answer): it is finished exactly as a compiled result here,
 * and nothing runs twice.
 */
export function createCompiledExecution(
  executedElsewhere?: (contextValue: unknown) => ExecutionResult | undefined,
): CompiledExecution {
  // Counts die with their document; compiled forms are bounded on their own.
  const runs = new WeakMap<DocumentNode, Runs>();
  const forms = createLru<Forms, DocumentNode>(COMPILED_CACHE, (document, byName) => {
    let bytes = 0;
    for (const form of byName.values()) bytes += formBytes(document, form);
    return bytes;
  });
  const plugin: Plugin = {
    onExecute({ args, executeFn, setExecuteFn }) {
      const precomputed = executedElsewhere?.(args.contextValue);
      if (precomputed) {
        setExecuteFn((executeArgs: ExecutionArgs) => finish(precomputed, executeArgs, executeFn));
        return;
      }
      const compiled = compiledFor(runs, forms, args);
      if (compiled === undefined || compiled === 'interpret') return;
      setExecuteFn(async (executeArgs: ExecutionArgs) => {
        const result = (await compiled.query(
          executeArgs.rootValue,
          executeArgs.contextValue,
          executeArgs.variableValues ?? {},
        )) as ExecutionResult;
        return finish(result, executeArgs, executeFn);
      });
    },
  };
  return {
    plugin,
    compiledFor(document, operationName) {
      const form = forms.get(document)?.get(operationName ?? '');
      return form === 'interpret' ? undefined : form;
    },
  };
}

/** A compiled result as graphql-js would have given it. */
async function finish(
  result: ExecutionResult,
  executeArgs: ExecutionArgs,
  executeFn: (args: ExecutionArgs) => unknown,
): Promise<ExecutionResult> {
  if (!result.errors?.length) return result;
  // No data: the variables were refused before execution began, so nothing ran upstream.
  if (result.data === undefined) return executeFn(executeArgs) as Promise<ExecutionResult>;
  // Errors first, as graphql-js orders them (and the spec recommends), so the bytes match too.
  const { errors, data, ...rest } = result;
  return { errors: located(errors, executeArgs), data, ...rest };
}

function compiledFor(
  runs: WeakMap<DocumentNode, Runs>,
  forms: Lru<Forms, DocumentNode>,
  args: ExecutionArgs,
) {
  const key = args.operationName ?? '';
  const kept = forms.get(args.document);
  const form = kept?.get(key);
  if (form !== undefined) return form;
  let counts = runs.get(args.document);
  if (!counts) {
    counts = new Map();
    runs.set(args.document, counts);
  }
  if (!counts.has(key) && counts.size >= MAX_NAMES_PER_DOCUMENT) return undefined;
  const count = (counts.get(key) ?? 0) + 1;
  counts.set(key, count);
  if (count < RUNS_BEFORE_COMPILE) return undefined;
  const compiled = compile(args);
  // A new map, weighed again as a whole.
  forms.set(args.document, new Map(kept).set(key, compiled));
  return compiled;
}

/**
 * Whether an operation may be compiled: small enough (see MAX_COMPILED_FIELDS) and free of
 * `@skip`/`@include`. graphql-jit decides those at run time over the fields of every branch, so a
 * skipped fragment still sets the order of the keys in the answer (`{ ...F @skip(if: true) name id }`
 * with `F { id name }` came back as `id, name`); graphql-js orders by the included selections, as
 * the spec's CollectFields does. Operations with conditions stay interpreted, and so do those with
 * `@defer` or `@stream`, which graphql-jit would answer all at once.
 */
export function compilable(document: DocumentNode, operationName?: string | null): boolean {
  const operation = getOperationAST(document, operationName);
  return operation != null && simpleAndSmall(operation.selectionSet, fragmentsOf(document));
}

function compile(args: ExecutionArgs): Compiled {
  if (!compilable(args.document, args.operationName)) return 'interpret';
  try {
    const result = compileQuery(args.schema, args.document, args.operationName ?? undefined, {
      // Results are serialised by Yoga (JSON.stringify keeps JSON.rawJSON int64 values exact).
      customJSONSerializer: false,
    });
    return isCompiledQuery(result) ? result : 'interpret';
  } catch {
    return 'interpret';
  }
}

function fragmentsOf(document: DocumentNode): Map<string, FragmentDefinitionNode> {
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const definition of document.definitions) {
    if (definition.kind === Kind.FRAGMENT_DEFINITION) fragments.set(definition.name.value, definition);
  }
  return fragments;
}

/** Whether the selections, fragments expanded, hold no condition and at most MAX_COMPILED_FIELDS fields. */
function simpleAndSmall(
  selectionSet: SelectionSetNode,
  fragments: Map<string, FragmentDefinitionNode>,
): boolean {
  let fields = 0;
  const stack: SelectionSetNode[] = [selectionSet];
  while (stack.length > 0) {
    for (const selection of (stack.pop() as SelectionSetNode).selections) {
      if (selection.directives?.some(isCondition)) return false;
      if (selection.kind === Kind.FIELD) {
        if (++fields > MAX_COMPILED_FIELDS) return false;
        if (selection.selectionSet) stack.push(selection.selectionSet);
      } else if (selection.kind === Kind.INLINE_FRAGMENT) {
        stack.push(selection.selectionSet);
      } else {
        const fragment = fragments.get(selection.name.value);
        // Validation has run, so the fragment exists; each spread counts again, as jit inlines it.
        if (fragment) stack.push(fragment.selectionSet);
        if (++fields > MAX_COMPILED_FIELDS) return false;
      }
    }
  }
  return true;
}

/** Directives graphql-jit does not honour as graphql-js does: conditions, and incremental delivery. */
const INTERPRETED_DIRECTIVES: ReadonlySet<string> = new Set(['skip', 'include', 'defer', 'stream']);

function isCondition(directive: DirectiveNode): boolean {
  return INTERPRETED_DIRECTIVES.has(directive.name.value);
}

/**
 * graphql-jit's errors carry `locations` but not the AST nodes Yoga rebuilds errors from, so they
 * would reach the client without locations. Each field's nodes are found again by the error's
 * path, as graphql-js would have attached them.
 */
function located(errors: readonly GraphQLError[], args: ExecutionArgs): GraphQLError[] {
  const operation = getOperationAST(args.document, args.operationName);
  const fragments = fragmentsOf(args.document);
  return errors.map((error) => {
    if (error.nodes || !error.path || !operation) return error;
    const nodes = fieldNodesAt(operation.selectionSet, error.path, fragments);
    return new GraphQLError(error.message, {
      nodes: nodes.length > 0 ? nodes : null,
      path: error.path,
      originalError: error.originalError ?? null,
      extensions: error.extensions ?? null,
    });
  });
}

function fieldNodesAt(
  root: SelectionSetNode,
  path: ReadonlyArray<string | number>,
  fragments: Map<string, FragmentDefinitionNode>,
): FieldNode[] {
  let nodes: FieldNode[] = [];
  let sets = [root];
  for (const key of path) {
    if (typeof key === 'number') continue;
    nodes = [];
    for (const set of sets) collectFields(set, key, fragments, nodes);
    sets = nodes.flatMap((node) => (node.selectionSet ? [node.selectionSet] : []));
  }
  return nodes;
}

/** The fields answering to `responseKey`, in document order (graphql-js's order of locations). */
function collectFields(
  selectionSet: SelectionSetNode,
  responseKey: string,
  fragments: Map<string, FragmentDefinitionNode>,
  into: FieldNode[],
): void {
  for (const selection of selectionSet.selections) {
    if (selection.kind === Kind.FIELD) {
      if ((selection.alias ?? selection.name).value === responseKey) into.push(selection);
    } else if (selection.kind === Kind.INLINE_FRAGMENT) {
      collectFields(selection.selectionSet, responseKey, fragments, into);
    } else {
      const fragment = fragments.get(selection.name.value);
      if (fragment) collectFields(fragment.selectionSet, responseKey, fragments, into);
    }
  }
}
