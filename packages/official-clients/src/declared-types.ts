// The libraries' own declarations as the judge of a response: a JSON value is checked against the TypeScript type
// a library declares for a method's result, read from the library's .d.ts files with the compiler API.
import path from 'node:path';
import ts from 'typescript';

/**
 * Where a declared type is: a module as a user imports it (resolved like TypeScript resolves it from this package;
 * an absolute path is a declaration file of our own), or a declaration file inside a package (`file`, for classes the package only re-exports under a namespace), then
 * a path from one of its exports: member names, `name()` for the awaited result of a call (`Promise<T>` → `T`).
 * `['MarketApi', 'getMarkets()', 'data']` is `data` of what `new MarketApi().getMarkets()` resolves to.
 */
export interface TypeRef {
  module: string;
  file?: string;
  path: readonly string[];
}

export interface Problem {
  /** JSONPath-like location in the value: `$.markets[0].updated_time`. */
  at: string;
  message: string;
}

const MAX_PROBLEMS = 50;

export class DeclaredTypes {
  private readonly program: ts.Program;
  private readonly entries: ReadonlyMap<string, string>;
  private readonly checker: ts.TypeChecker;

  private constructor(program: ts.Program, entries: ReadonlyMap<string, string>) {
    this.program = program;
    this.entries = entries;
    this.checker = program.getTypeChecker();
  }

  /**
   * One program over the declarations of every module the refs name (parsing is the expensive part; the checker
   * resolves types lazily).
   */
  static load(refs: readonly TypeRef[]): DeclaredTypes {
    const options: ts.CompilerOptions = {
      target: ts.ScriptTarget.ES2022,
      module: ts.ModuleKind.NodeNext,
      moduleResolution: ts.ModuleResolutionKind.NodeNext,
      // Strict, so that `?:` and `| null` mean what the library's authors meant.
      strict: true,
      skipLibCheck: true,
      noEmit: true,
      types: [],
    };
    const entries = new Map<string, string>();
    for (const ref of refs) {
      const key = entryKey(ref);
      if (!entries.has(key)) entries.set(key, resolveDeclarationFile(ref, options));
    }
    const program = ts.createProgram([...new Set(entries.values())], options);
    return new DeclaredTypes(program, entries);
  }

  /** The type a ref names; throws if any step does not exist (a table naming a method the library lacks). */
  resolve(ref: TypeRef): ts.Type {
    const fileName = this.entries.get(entryKey(ref));
    if (!fileName) throw new Error(`${entryKey(ref)} was not loaded`);
    const source = this.program.getSourceFile(fileName);
    if (!source) throw new Error(`no declarations in ${fileName}`);
    const moduleSymbol = this.checker.getSymbolAtLocation(source);
    if (!moduleSymbol) throw new Error(`${fileName} is not a module`);
    const [first, ...rest] = ref.path;
    if (first === undefined) throw new Error('a type path needs at least an export name');
    let type = this.exportType(moduleSymbol, first, fileName);
    let where = first;
    for (const step of rest) {
      const call = step.endsWith('()');
      const name = call ? step.slice(0, -2) : step;
      const member = type.getProperty(name);
      if (!member) throw new Error(`${where} has no member ${name}`);
      type = this.checker.getTypeOfSymbol(member);
      where = `${where}.${name}`;
      if (call) {
        const [signature] = type.getCallSignatures();
        if (!signature) throw new Error(`${where} is not callable`);
        const returned = this.checker.getReturnTypeOfSignature(signature);
        type = this.checker.getAwaitedType(returned) ?? returned;
        where = `${where}()`;
      }
    }
    return type;
  }

  /** A readable rendering of a type, for reports. */
  describe(type: ts.Type): string {
    return this.checker.typeToString(type, undefined, ts.TypeFormatFlags.NoTruncation);
  }

  /** Problems of `value` against `type` (empty when the declared type accepts it); at most 50. */
  check(type: ts.Type, value: unknown): Problem[] {
    const problems: Problem[] = [];
    this.visit(type, value, '$', problems);
    return problems.slice(0, MAX_PROBLEMS);
  }

  private exportType(moduleSymbol: ts.Symbol, name: string, fileName: string): ts.Type {
    const exported = this.checker.getExportsOfModule(moduleSymbol).find((s) => s.escapedName === name);
    if (!exported) throw new Error(`${fileName} exports no ${name}`);
    const symbol = exported.flags & ts.SymbolFlags.Alias ? this.checker.getAliasedSymbol(exported) : exported;
    // A class stands for its instances (what a user calls methods on); an interface or alias for itself; a
    // value (a const, a default-exported class expression) for its type.
    if (symbol.flags & (ts.SymbolFlags.Class | ts.SymbolFlags.Interface | ts.SymbolFlags.TypeAlias)) {
      return this.checker.getDeclaredTypeOfSymbol(symbol);
    }
    return this.checker.getTypeOfSymbol(symbol);
  }

  private visit(type: ts.Type, value: unknown, at: string, problems: Problem[]): void {
    if (problems.length >= MAX_PROBLEMS) return;
    const { flags } = type;
    const fail = (message: string) => problems.push({ at, message });

    if (flags & (ts.TypeFlags.Any | ts.TypeFlags.Unknown | ts.TypeFlags.TypeParameter)) return;
    if (type.isUnion()) return this.visitUnion(type, value, at, problems);
    if (type.isIntersection()) {
      for (const part of type.types) this.visit(part, value, at, problems);
      return;
    }
    if (flags & ts.TypeFlags.Never) return void fail(`nothing is allowed here, got ${show(value)}`);
    // `void`: a result the library tells its users not to use; whatever the platform answered is fine.
    if (flags & ts.TypeFlags.Void) return;
    if (flags & ts.TypeFlags.Undefined) {
      if (value !== undefined) fail(`expected no value, got ${show(value)}`);
      return;
    }
    if (flags & ts.TypeFlags.Null) {
      if (value !== null) fail(`expected null, got ${show(value)}`);
      return;
    }
    if (type.isStringLiteral() || type.isNumberLiteral()) {
      if (value !== type.value) fail(`expected ${JSON.stringify(type.value)}, got ${show(value)}`);
      return;
    }
    if (flags & ts.TypeFlags.BooleanLiteral) {
      const expected = this.describe(type) === 'true';
      if (value !== expected) fail(`expected ${String(expected)}, got ${show(value)}`);
      return;
    }
    if (flags & (ts.TypeFlags.String | ts.TypeFlags.TemplateLiteral | ts.TypeFlags.StringMapping)) {
      if (typeof value !== 'string') fail(`expected string, got ${show(value)}`);
      return;
    }
    if (flags & ts.TypeFlags.Number) {
      if (typeof value !== 'number') fail(`expected number, got ${show(value)}`);
      return;
    }
    if (flags & ts.TypeFlags.Boolean) {
      if (typeof value !== 'boolean') fail(`expected boolean, got ${show(value)}`);
      return;
    }
    if (flags & (ts.TypeFlags.BigInt | ts.TypeFlags.BigIntLiteral | ts.TypeFlags.ESSymbolLike)) {
      return void fail(`${this.describe(type)} cannot come from JSON, got ${show(value)}`);
    }
    if (flags & ts.TypeFlags.NonPrimitive) {
      // `object`
      if (typeof value !== 'object' || value === null) fail(`expected an object, got ${show(value)}`);
      return;
    }
    if (flags & ts.TypeFlags.Object) return this.visitObject(type as ts.ObjectType, value, at, problems);
    fail(`unsupported declared type ${this.describe(type)}`);
  }

  private visitUnion(type: ts.UnionType, value: unknown, at: string, problems: Problem[]): void {
    // Accepted if one member accepts it. Otherwise the most telling explanation is that of the member the value
    // resembles (right kind here, wrong deeper down) with the fewest problems; failing that, the union itself.
    let closest: Problem[] | undefined;
    for (const member of type.types) {
      const own: Problem[] = [];
      this.visit(member, value, at, own);
      if (own.length === 0) return;
      if (own.every((p) => p.at !== at) && (!closest || own.length < closest.length)) closest = own;
    }
    if (closest) problems.push(...closest);
    else problems.push({ at, message: `expected ${this.describe(type)}, got ${show(value)}` });
  }

  private visitObject(type: ts.ObjectType, value: unknown, at: string, problems: Problem[]): void {
    const fail = (message: string) => problems.push({ at, message });
    if (this.checker.isTupleType(type)) return this.visitTuple(type as ts.TupleTypeReference, value, at, problems);
    if (this.checker.isArrayType(type)) {
      if (!Array.isArray(value)) return void fail(`expected ${this.describe(type)}, got ${show(value)}`);
      const element = this.checker.getTypeArguments(type as ts.TypeReference)[0];
      if (element) value.forEach((item, i) => this.visit(element, item, `${at}[${i}]`, problems));
      return;
    }
    const symbolName = type.getSymbol()?.getName();
    if (symbolName === 'Date' && isLibSymbol(type.getSymbol())) {
      // A library declaring `Date` for a JSON field receives a string (JSON has no dates) and never converts it
      // (clob-client's RFQ types): the wire carries an RFC 3339 timestamp, which is what can be checked.
      if (typeof value !== 'string' || Number.isNaN(Date.parse(value)))
        fail(`expected a timestamp, got ${show(value)}`);
      return;
    }
    const properties = this.checker.getPropertiesOfType(type).filter((p) => !isMethod(p));
    const callable = type.getCallSignatures().length > 0 || type.getConstructSignatures().length > 0;
    if (callable && properties.length === 0) return void fail(`${this.describe(type)} cannot come from JSON`);
    if (typeof value !== 'object' || value === null || Array.isArray(value)) {
      return void fail(`expected ${this.describe(type)}, got ${show(value)}`);
    }
    const record = value as Record<string, unknown>;
    const declared = new Set<string>();
    for (const property of properties) {
      const name = property.getName();
      declared.add(name);
      const propertyType = this.checker.getTypeOfSymbol(property);
      const optional = (property.flags & ts.SymbolFlags.Optional) !== 0;
      const where = `${at}${accessor(name)}`;
      if (!(name in record) || record[name] === undefined) {
        if (!optional && !acceptsUndefined(propertyType)) {
          problems.push({ at: where, message: `missing (declared ${this.describe(propertyType)})` });
        }
        continue;
      }
      // An optional field sent as null reads as absent to the code the library's users write against `?:`
      // (`x?.y`, `x ?? d`); generated clients declare not-required fields that way whatever the server sends.
      if (optional && record[name] === null) continue;
      this.visit(propertyType, record[name], where, problems);
      if (problems.length >= MAX_PROBLEMS) return;
    }
    const stringIndex = this.checker.getIndexTypeOfType(type, ts.IndexKind.String);
    const numberIndex = this.checker.getIndexTypeOfType(type, ts.IndexKind.Number);
    for (const [key, item] of Object.entries(record)) {
      if (declared.has(key)) continue;
      const indexType = numberIndex && /^\d+$/.test(key) ? numberIndex : stringIndex;
      if (indexType) this.visit(indexType, item, `${at}${accessor(key)}`, problems);
    }
  }

  private visitTuple(type: ts.TupleTypeReference, value: unknown, at: string, problems: Problem[]): void {
    if (!Array.isArray(value))
      return void problems.push({ at, message: `expected ${this.describe(type)}, got ${show(value)}` });
    const elements = this.checker.getTypeArguments(type);
    const { minLength, elementFlags } = type.target;
    if (value.length < minLength) {
      problems.push({
        at,
        message: `expected ${this.describe(type)} (at least ${minLength} elements), got ${value.length}`,
      });
      return;
    }
    // Elements beyond the declared ones are accepted, as properties beyond the declared ones are: code written
    // against the declaration never reads them (ccxt declares `[price, amount]` and adds an order count).
    const variadic = elementFlags.findIndex((f) => (f & ts.ElementFlags.Variable) !== 0);
    value.forEach((item, i) => {
      const index = variadic >= 0 && i >= variadic ? variadic : i;
      const element = elements[index];
      if (element) this.visit(element, item, `${at}[${i}]`, problems);
    });
  }
}

function entryKey(ref: TypeRef): string {
  return ref.file ? `${ref.module}/${ref.file}` : ref.module;
}

/** The declaration file TypeScript would use for an import of the module from this package (ESM, `types` first). */
function resolveDeclarationFile(ref: TypeRef, options: ts.CompilerOptions): string {
  if (path.isAbsolute(ref.module)) return ref.module;
  const from = path.join(import.meta.dirname, 'declared-types.ts');
  const resolved = ts.resolveModuleName(ref.module, from, options, ts.sys, undefined, undefined, ts.ModuleKind.ESNext);
  const file = resolved.resolvedModule?.resolvedFileName;
  if (!file || !/\.d\.[cm]?ts$/.test(file)) throw new Error(`no declaration file found for ${ref.module}`);
  if (!ref.file) return file;
  // A file of the package: from the package's root (the folder of its package.json, above its entry).
  for (let dir = path.dirname(file); dir !== path.dirname(dir); dir = path.dirname(dir)) {
    const manifest = path.join(dir, 'package.json');
    if (
      ts.sys.fileExists(manifest) &&
      (JSON.parse(ts.sys.readFile(manifest) ?? '{}') as { name?: string }).name === ref.module
    ) {
      return path.join(dir, ref.file);
    }
  }
  throw new Error(`no package root found for ${ref.module}`);
}

function acceptsUndefined(type: ts.Type): boolean {
  if (type.flags & (ts.TypeFlags.Undefined | ts.TypeFlags.Void | ts.TypeFlags.Any | ts.TypeFlags.Unknown)) return true;
  return type.isUnion() && type.types.some(acceptsUndefined);
}

function isMethod(symbol: ts.Symbol): boolean {
  return (symbol.flags & ts.SymbolFlags.Method) !== 0;
}

function isLibSymbol(symbol: ts.Symbol | undefined): boolean {
  return (symbol?.declarations ?? []).some((d) => /[\\/]typescript[\\/]lib[\\/]lib\./.test(d.getSourceFile().fileName));
}

function accessor(name: string): string {
  return /^[A-Za-z_$][\w$]*$/.test(name) ? `.${name}` : `[${JSON.stringify(name)}]`;
}

/** A short rendering of a value for a problem message. */
export function show(value: unknown): string {
  if (value === undefined) return 'nothing';
  if (Array.isArray(value)) return `an array (${value.length})`;
  if (value === null) return 'null';
  if (typeof value === 'object') return 'an object';
  const text = JSON.stringify(value);
  return `${typeof value} ${text.length > 40 ? `${text.slice(0, 37)}...` : text}`;
}
