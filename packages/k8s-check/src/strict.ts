import path from 'node:path';
import ts from 'typescript';
import type { KindSpec } from './kinds';

/**
 * Unknown-field detection. The models' JSON-schema validators check types, enums, formats and required fields, but
 * accept fields the API does not have (the OpenAPI document does not forbid additional properties), while
 * `kubectl apply` rejects them (strict field validation). The models' TypeScript declarations list every field of
 * every type, generated from the same OpenAPI document, so this walks an object along its declared type with the
 * TypeScript checker and reports every key the type does not declare. Maps (`labels`, `data`, …) are index
 * signatures and accept any key; `any`-typed fields (embedded raw objects) are not descended into.
 */
export class UnknownFieldChecker {
  private readonly checker: ts.TypeChecker;
  private readonly roots = new Map<string, ts.Type>();

  /** `baseDir`: a directory from which the model packages resolve (this package's). */
  constructor(kinds: readonly KindSpec[], baseDir: string) {
    const fileName = path.join(baseDir, '__k8s_check_roots__.mts');
    const source = kinds
      .map((k, i) => `import type { I${k.kind} as T${i} } from '${k.module}';\nexport declare const r${i}: T${i};`)
      .join('\n');
    const options: ts.CompilerOptions = {
      module: ts.ModuleKind.NodeNext,
      moduleResolution: ts.ModuleResolutionKind.NodeNext,
      target: ts.ScriptTarget.ES2022,
      lib: ['lib.es2022.d.ts'],
      types: [],
      strict: true,
      noEmit: true,
      skipLibCheck: true,
    };
    const host = ts.createCompilerHost(options);
    const getSourceFile = host.getSourceFile.bind(host);
    host.getSourceFile = (name, languageVersion, ...rest) =>
      name === fileName
        ? ts.createSourceFile(name, source, languageVersion, true)
        : getSourceFile(name, languageVersion, ...rest);
    const fileExists = host.fileExists.bind(host);
    host.fileExists = (name) => name === fileName || fileExists(name);
    const program = ts.createProgram([fileName], options, host);
    this.checker = program.getTypeChecker();
    const root = program.getSourceFile(fileName);
    if (!root) throw new Error('unknown-field checker: could not create its root file');
    const unresolved = program.getSemanticDiagnostics(root);
    if (unresolved.length > 0) {
      const text = unresolved.map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n')).join('; ');
      throw new Error(`unknown-field checker: model types did not resolve: ${text}`);
    }
    let i = 0;
    for (const statement of root.statements) {
      if (!ts.isVariableStatement(statement)) continue;
      const declaration = statement.declarationList.declarations[0];
      const kind = kinds[i++];
      if (declaration && kind) {
        this.roots.set(`${kind.apiVersion}/${kind.kind}`, this.checker.getTypeAtLocation(declaration.name));
      }
    }
  }

  /** Paths of the fields `value` has and its kind's type does not declare (e.g. `spec.template.spec.replica`). */
  unknownFields(apiVersion: string, kind: string, value: unknown): string[] {
    const type = this.roots.get(`${apiVersion}/${kind}`);
    if (!type) return [];
    const found: string[] = [];
    this.walk(value, type, '', found);
    return found;
  }

  private walk(value: unknown, declared: ts.Type, at: string, found: string[]): void {
    if (value === null || typeof value !== 'object') return;
    const type = this.checker.getNonNullableType(declared);
    if (type.flags & (ts.TypeFlags.Any | ts.TypeFlags.Unknown)) return;
    const members = type.isUnion() ? type.types : [type];

    if (Array.isArray(value)) {
      for (const member of members) {
        const element = this.checker.getIndexTypeOfType(member, ts.IndexKind.Number);
        if (element && this.checker.isArrayLikeType(member)) {
          value.forEach((item, i) => this.walk(item, element, `${at}[${i}]`, found));
          return;
        }
      }
      return; // not an array type: the schema validator reports the type mismatch
    }

    const objects = members.filter(
      (m) => m.flags & ts.TypeFlags.Object && !this.checker.isArrayLikeType(m) && m.getCallSignatures().length === 0,
    );
    if (objects.length === 0) return;
    const mapValue = objects
      .map((m) => this.checker.getIndexTypeOfType(m, ts.IndexKind.String))
      .find((t): t is ts.Type => t !== undefined);
    const properties = new Map<string, ts.Symbol>();
    for (const m of objects) for (const p of this.checker.getPropertiesOfType(m)) properties.set(p.getName(), p);

    for (const [key, child] of Object.entries(value as Record<string, unknown>)) {
      const childPath = at === '' ? key : `${at}.${key}`;
      const property = properties.get(key);
      if (property) {
        this.walk(child, this.checker.getTypeOfSymbol(property), childPath, found);
      } else if (mapValue) {
        this.walk(child, mapValue, childPath, found);
      } else {
        found.push(childPath);
      }
    }
  }
}
