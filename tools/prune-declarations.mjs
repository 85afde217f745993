// Drops from a declaration rollup what none of its exports reaches, and the imports left unused.
// api-extractor's trimmed rollup removes `@internal` members but keeps every declaration they
// referred to (the store's `EventStore`, the PostgreSQL `PgHistory`, the Runtime), and with them the
// imports of `pg` and lmdb a consumer's compiler then checks.
import { readFileSync, writeFileSync } from 'node:fs';
import ts from 'typescript';

/** The names a top-level statement declares (an import: its local bindings). */
function declaredNames(statement) {
  if (ts.isImportDeclaration(statement)) {
    const clause = statement.importClause;
    const bindings = clause?.namedBindings;
    return [
      ...(clause?.name ? [clause.name.text] : []),
      ...(bindings && ts.isNamespaceImport(bindings) ? [bindings.name.text] : []),
      ...(bindings && ts.isNamedImports(bindings) ? bindings.elements.map((e) => e.name.text) : []),
    ];
  }
  if (ts.isVariableStatement(statement)) return statement.declarationList.declarations.map((d) => d.name.getText());
  return statement.name && ts.isIdentifier(statement.name) ? [statement.name.text] : [];
}

/** Every identifier inside a statement: what it may refer to (an over-approximation, which only keeps more). */
function identifiersIn(statement) {
  const found = new Set();
  const visit = (node) => {
    if (ts.isIdentifier(node)) found.add(node.text);
    ts.forEachChild(node, visit);
  };
  ts.forEachChild(statement, visit);
  return found;
}

const exported = (statement) =>
  ts.isExportDeclaration(statement) ||
  ts.isExportAssignment(statement) ||
  (ts.canHaveModifiers(statement) &&
    (ts.getModifiers(statement) ?? []).some((m) => m.kind === ts.SyntaxKind.ExportKeyword));

/** Rewrites `file` keeping the exported statements and what they reach, transitively. */
export function pruneDeclarations(file) {
  const text = readFileSync(file, 'utf8');
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const byName = new Map();
  for (const statement of source.statements)
    for (const name of declaredNames(statement)) byName.set(name, [...(byName.get(name) ?? []), statement]);
  const kept = new Set();
  const queue = source.statements.filter(exported);
  const used = new Set();
  while (queue.length > 0) {
    const statement = queue.pop();
    if (kept.has(statement)) continue;
    kept.add(statement);
    if (ts.isImportDeclaration(statement)) continue;
    for (const name of identifiersIn(statement)) {
      used.add(name);
      for (const next of byName.get(name) ?? []) if (!kept.has(next)) queue.push(next);
    }
  }
  let out = '';
  let at = 0;
  for (const statement of source.statements) {
    out += text.slice(at, statement.getFullStart());
    at = statement.getEnd();
    const keep = ts.isImportDeclaration(statement)
      ? declaredNames(statement).some((name) => used.has(name))
      : kept.has(statement);
    if (keep) out += text.slice(statement.getFullStart(), at);
    // An import carries no documentation of its own: comments before it are the file's (@packageDocumentation).
    else if (ts.isImportDeclaration(statement)) out += text.slice(statement.getFullStart(), statement.getStart());
  }
  writeFileSync(file, out + text.slice(at));
}
