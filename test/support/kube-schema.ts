import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import type { KubeObject } from './kustomize.ts';

/**
 * Two checks of Kubernetes objects against the API's schemas, as `kubernetes-models` ships them
 * (generated from the API's OpenAPI document), offline:
 * - `validateObject`: its JSON Schema validators (types, enums, required fields, formats);
 * - `unknownFields`: its TypeScript types, with each object as a typed object literal, so a field
 *   the API does not have (a typo such as `readinesProbe`, which the JSON Schemas let through, as
 *   the API server would silently drop it) is a compile error.
 */

function modulePath(apiVersion: string): string {
  return apiVersion === 'v1' ? 'kubernetes-models/v1' : `kubernetes-models/${apiVersion}`;
}

/** Throws the validator's message when `object` does not validate; unknown kinds throw too. */
export async function validateObject(object: KubeObject): Promise<void> {
  const models = (await import(modulePath(object.apiVersion))) as Record<
    string,
    new (
      data: unknown,
    ) => { validate(): void }
  >;
  const Model = models[object.kind];
  if (!Model) throw new Error(`kubernetes-models has no ${object.apiVersion} ${object.kind}`);
  new Model(object).validate();
}

const ROOT = new URL('../../', import.meta.url);
/** Not on disk: handed to the compiler from memory, in a directory whose node_modules resolve. */
const VIRTUAL = fileURLToPath(new URL('test/deploy/__manifests__.ts', ROOT));

/** Every field of `objects` that their kinds' API types do not have, as compiler messages. */
export function unknownFields(objects: KubeObject[]): string[] {
  const kinds = [...new Set(objects.map((object) => `${object.apiVersion} ${object.kind}`))];
  const source = [
    ...kinds.map((entry) => {
      const [apiVersion = '', kind] = entry.split(' ');
      return `import type { I${kind} } from '${modulePath(apiVersion)}';`;
    }),
    ...objects.map(
      (object, index) =>
        `// ${object.kind}/${object.metadata.name}\nexport const object${index}: I${object.kind} = ${JSON.stringify(object, null, 2)};`,
    ),
  ].join('\n');
  const options: ts.CompilerOptions = {
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    strict: true,
    noEmit: true,
    skipLibCheck: true,
    types: [],
  };
  const host = ts.createCompilerHost(options);
  const { getSourceFile, fileExists, readFile } = host;
  host.getSourceFile = (name, language, ...rest) =>
    name === VIRTUAL
      ? ts.createSourceFile(name, source, language)
      : getSourceFile.call(host, name, language, ...rest);
  host.fileExists = (name) => name === VIRTUAL || fileExists.call(host, name);
  host.readFile = (name) => (name === VIRTUAL ? source : readFile.call(host, name));
  const program = ts.createProgram([VIRTUAL], options, host);
  const file = program.getSourceFile(VIRTUAL);
  return ts.getPreEmitDiagnostics(program, file).map((diagnostic) => {
    const message = ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n');
    if (diagnostic.file === undefined || diagnostic.start === undefined) return message;
    // The object's comment line names it; the line itself shows the field.
    const { line } = diagnostic.file.getLineAndCharacterOfPosition(diagnostic.start);
    const lines = source.split('\n');
    const owner = lines
      .slice(0, line + 1)
      .reverse()
      .find((text) => text.startsWith('// '));
    return `${owner?.slice(3)}: ${lines[line]?.trim()}: ${message}`;
  });
}
