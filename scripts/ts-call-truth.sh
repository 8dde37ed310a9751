#!/usr/bin/env bash
# Call-edge truth for a TypeScript repository from the TypeScript checker, as in
# docs/eval/graph/trpc.json and date-fns.json: every call expression resolved by the checker
# (go-to-definition from the callee's name), named as `git-lynx module-summary` names
# definitions, a seeded focus of 40 definitions, every edge into and out of them, and traps
# (call sites that name a focus symbol but resolve elsewhere).
#
# Usage: scripts/ts-call-truth.sh CLONE NAME SEED TESTPAT [FOCUS,FOCUS,...]
#   CLONE    a checkout at the pinned commit (clean; git-lynx indexes it on first use)
#   NAME     output prefix, in $ORACLE: NAME.truth.json (focus_symbols, calls, not_edges, counts
#            of what was left out) and NAME.report.txt (why candidates were left out, degrees)
#   SEED     focus sampling seed
#   TESTPAT  regex of paths never taken as focus (tests, examples, scripts)
#   FOCUS    definitions always in the focus (`path:Qualified.name`)
#   LYNX=path/to/git-lynx (default git-lynx); ORACLE=work dir (default ./ts-oracle), where
#   typescript and the packages whose types the repository's tests use are npm-installed.
# The two sets were made with:
#   scripts/ts-call-truth.sh bench/trpc trpc 7 '(__tests__|\.test\.|/test/|/tests/|examples/|\.spec\.|www/|scripts/)'
#   scripts/ts-call-truth.sh bench/date-fns dfns 7 '(/test\.ts$|/test/|\.test\.|/tests/|^scripts/|examples/|^src/fp/|/_lib/test/|^submodules/|^docs/|\.bench\.ts$|benchmark)' \
#     src/parse/_lib/Parser.ts:Parser.run,src/parse/_lib/Parser.ts:Parser.parse,src/parse/_lib/Setter.ts:Setter.validate,src/parse/_lib/Setter.ts:Setter.set,src/_lib/format/lightFormatters/index.ts:y,src/_lib/format/lightFormatters/index.ts:M,src/_lib/format/lightFormatters/index.ts:d,src/_lib/format/lightFormatters/index.ts:H,src/_lib/format/lightFormatters/index.ts:S,src/_lib/format/longFormatters/index.ts:dateLongFormatter,src/fp/addDays/index.ts:addDays,src/fp/addHours/index.ts:addHours
# then method, unsure and the pinned commit are written into docs/eval/graph/<name>.json by hand.
set -euo pipefail
[ $# -ge 4 ] || { sed -n 2,25p "$0" >&2; exit 2; }
clone=$(cd "$1" && pwd)
name=$2 seed=$3 testpat=$4 force=${5:-}
lynx=${LYNX:-git-lynx}
oracle=${ORACLE:-./ts-oracle}
mkdir -p "$oracle"
oracle=$(cd "$oracle" && pwd)
command -v node >/dev/null || { echo "ts-call-truth: node is needed (the TypeScript compiler runs on it)" >&2; exit 1; }
if [ ! -d "$oracle/node_modules/typescript" ]; then
  (cd "$oracle" && { [ -f package.json ] || npm init -y >/dev/null; } &&
    npm install --no-audit --no-fund typescript@5.9 vitest@3 zod@3 @tanstack/react-query@5 react@19 @types/react@19 @types/node@22 >/dev/null)
fi

cat >"$oracle/calls.js" <<'JS'
// Every call expression of a repository's TypeScript/JavaScript, resolved by the TypeScript
// checker: callee = the definition go-to-definition reaches from the callee's name (aliases and
// re-exports followed; the resolved signature's declaration where the name has several), caller =
// the chain of named enclosing declarations. Output: JSON lines.
// Usage: node calls.js REPO_DIR OUT.jsonl [paths.json]
const ts = require('typescript');
const fs = require('fs');
const path = require('path');
const { execSync } = require('child_process');

const repo = path.resolve(process.argv[2]);
const out = process.argv[3];
const paths = process.argv[4] ? JSON.parse(fs.readFileSync(process.argv[4], 'utf8')) : undefined;

const files = execSync('git ls-files', { cwd: repo, maxBuffer: 1 << 28 })
  .toString()
  .split('\n')
  .filter((f) => /\.(ts|tsx|mts|cts|js|jsx|mjs|cjs)$/.test(f) && !f.endsWith('.d.ts') && !f.includes('node_modules/'))
  .filter((f) => fs.existsSync(path.join(repo, f)));

const options = {
  target: ts.ScriptTarget.ESNext,
  module: ts.ModuleKind.ESNext,
  moduleResolution: ts.ModuleResolutionKind.Bundler,
  allowJs: true,
  checkJs: false,
  jsx: ts.JsxEmit.Preserve,
  strict: true,
  skipLibCheck: true,
  noEmit: true,
  types: ['node', 'vitest/globals'],
  typeRoots: [path.join(__dirname, 'node_modules/@types')],
  allowImportingTsExtensions: true,
  resolveJsonModule: true,
  baseUrl: repo,
  // Packages the repository installs (vitest, zod, react, @tanstack/react-query, @types/node)
  // come from the oracle's own node_modules, so their receivers are typed.
  paths: Object.assign({}, paths || {}, { '*': [path.join(__dirname, 'node_modules/*'), path.join(__dirname, 'node_modules/@types/*')] }),
  lib: ['lib.esnext.full.d.ts'],
};
const program = ts.createProgram(files.map((f) => path.join(repo, f)), options);
const checker = program.getTypeChecker();
const rel = (f) => path.relative(repo, f);
const inRepo = (sf) => {
  const r = rel(sf.fileName);
  return !r.startsWith('..') && !r.includes('node_modules/') && !sf.isDeclarationFile;
};
const lineOf = (node) => node.getSourceFile().getLineAndCharacterOfPosition(node.getStart()).line + 1;

function declName(d) {
  if (!d) return undefined;
  if (ts.isConstructorDeclaration(d)) return 'constructor';
  const n = d.name;
  if (!n) return undefined;
  if (ts.isIdentifier(n) || ts.isPrivateIdentifier(n) || ts.isStringLiteral(n) || ts.isNumericLiteral(n)) return n.text;
  return undefined;
}

// A module-scope variable: its statement sits directly in the file or a namespace body.
function moduleScope(vd) {
  const list = vd.parent;
  if (!list || !ts.isVariableDeclarationList(list)) return false;
  const stmt = list.parent;
  return !!stmt && ts.isVariableStatement(stmt) && (ts.isSourceFile(stmt.parent) || ts.isModuleBlock(stmt.parent));
}

// `const f = () => {}` / `const f = function () {}`: a named function, local or not.
function isFnConst(d) {
  return ts.isVariableDeclaration(d) && !!d.initializer && (ts.isArrowFunction(d.initializer) || ts.isFunctionExpression(d.initializer));
}

function kindOf(d) {
  return ts.SyntaxKind[d.kind];
}

// Named declarations enclosing a node, innermost first.
function enclosing(node) {
  const chain = [];
  for (let p = node.parent; p && !ts.isSourceFile(p); p = p.parent) {
    let d;
    if (
      ts.isFunctionDeclaration(p) ||
      ts.isMethodDeclaration(p) ||
      ts.isConstructorDeclaration(p) ||
      ts.isGetAccessorDeclaration(p) ||
      ts.isSetAccessorDeclaration(p) ||
      ts.isPropertyDeclaration(p) ||
      ts.isClassDeclaration(p) ||
      ts.isClassExpression(p) ||
      ts.isModuleDeclaration(p) ||
      ts.isPropertyAssignment(p) ||
      ts.isFunctionExpression(p) ||
      ts.isVariableDeclaration(p) ||
      ts.isInterfaceDeclaration(p) ||
      ts.isEnumDeclaration(p)
    )
      d = p;
    if (!d) continue;
    const name = declName(d);
    if (!name) continue;
    chain.push({
      name,
      line: lineOf(d.name || d),
      start: lineOf(d),
      kind: kindOf(d),
      local: ts.isVariableDeclaration(d) ? !moduleScope(d) : false,
      fn: isFnConst(d),
    });
  }
  return chain;
}

function callee(call) {
  let expr = call.expression !== undefined ? call.expression : call.tag;
  while (ts.isParenthesizedExpression(expr) || ts.isNonNullExpression(expr) || ts.isAsExpression(expr)) expr = expr.expression;
  let via = null;
  // fn.call(this, ...) / fn.apply(this, args) call fn.
  if (ts.isPropertyAccessExpression(expr) && ['call', 'apply'].includes(expr.name.text)) {
    const t = checker.getSymbolAtLocation(expr.name);
    const td = t && t.declarations && t.declarations[0];
    if (td && !inRepo(td.getSourceFile())) {
      via = expr.name.text;
      expr = expr.expression;
      while (ts.isParenthesizedExpression(expr) || ts.isNonNullExpression(expr)) expr = expr.expression;
    }
  }
  let nameNode = expr;
  if (ts.isPropertyAccessExpression(expr)) nameNode = expr.name;
  else if (ts.isElementAccessExpression(expr)) nameNode = expr.argumentExpression;
  if (expr.kind === ts.SyntaxKind.SuperKeyword || expr.kind === ts.SyntaxKind.ImportKeyword) return null;
  let sym;
  try {
    sym = checker.getSymbolAtLocation(nameNode);
  } catch (e) {
    sym = undefined;
  }
  if (sym && sym.flags & ts.SymbolFlags.Alias) {
    try {
      sym = checker.getAliasedSymbol(sym);
    } catch (e) {}
  }
  let decls = (sym && sym.declarations) || [];
  let sigDecl;
  if (!via) {
    try {
      const sig = checker.getResolvedSignature(call);
      sigDecl = sig && sig.declaration;
    } catch (e) {}
  }
  let chosen;
  if (decls.length === 1) chosen = decls[0];
  else if (decls.length > 1) {
    // Overloads or merged declarations: the one the checker picked, else the implementation.
    if (sigDecl && decls.includes(sigDecl)) chosen = sigDecl;
    else chosen = decls.find((d) => d.body) || decls[0];
  } else if (sigDecl && !ts.isFunctionTypeNode(sigDecl) && !ts.isCallSignatureDeclaration(sigDecl)) chosen = sigDecl;
  if (!chosen) return { unresolved: true, text: expr.getText().slice(0, 80) };
  // A function expression or arrow: name it by what holds it.
  let d = chosen;
  if ((ts.isArrowFunction(d) || ts.isFunctionExpression(d)) && d.parent) d = d.parent;
  if (ts.isShorthandPropertyAssignment(d)) return { unresolved: true, text: expr.getText().slice(0, 80) };
  const sf = d.getSourceFile();
  if (!inRepo(sf)) return { external: true, text: expr.getText().slice(0, 80), where: rel(sf.fileName) };
  const name = declName(d);
  return {
    file: rel(sf.fileName),
    name,
    line: lineOf(d.name || d),
    start: lineOf(d),
    kind: kindOf(d),
    local: ts.isVariableDeclaration(d) ? !moduleScope(d) : ts.isParameter(d) || ts.isBindingElement(d),
    fn: isFnConst(d),
    container: d.parent && declName(d.parent),
    via,
  };
}

const w = fs.createWriteStream(out);
let n = 0;
for (const sf of program.getSourceFiles()) {
  if (!inRepo(sf)) continue;
  const file = rel(sf.fileName);
  const visit = (node) => {
    if (ts.isCallExpression(node) || ts.isTaggedTemplateExpression(node)) {
      const c = callee(node);
      if (c) {
        n++;
        w.write(
          JSON.stringify({
            file,
            line: lineOf(node),
            text: node.getText().split('\n')[0].slice(0, 100),
            callee: c,
            callers: enclosing(node),
          }) + '\n'
        );
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
}
w.end();
console.error(`files ${files.length}, calls ${n}`);
JS

cat >"$oracle/truth.py" <<'PY'
#!/usr/bin/env python3
"""Truth file from the checker's calls (calls.js output) named as git-lynx names definitions.

truth.py NAME REPO_DIR CALLS.jsonl LISTDIR TESTPAT SEED [FORCE_FOCUS,...]
Writes NAME.truth.json and NAME.report.txt.
"""
import collections
import json
import os
import random
import re
import subprocess
import sys

name, repo, calls_path, listdir, testpat, seed = sys.argv[1:7]
force = [f for f in (sys.argv[7].split(',') if len(sys.argv) > 7 else []) if f]
tre = re.compile(testpat)
cache = {}
missing_listing = set()


def defs(path):
    if path not in cache:
        p = os.path.join(listdir, path.replace('/', '__') + '.json')
        if not os.path.exists(p) or os.path.getsize(p) == 0:
            missing_listing.add(path)
            cache[path] = None
        else:
            cache[path] = json.load(open(p)).get('definitions', [])
    return cache[path]


def short(q):
    return q.rsplit('.', 1)[-1]


def map_decl(path, nm, line, contain=None):
    ds = defs(path)
    if ds is None:
        return None
    cands = [
        d for d in ds
        if short(d['name']) == nm and d['start_line'] <= line <= d['end_line']
        and (contain is None or d['start_line'] <= contain <= d['end_line'])
    ]
    if not cands:
        return None
    cands.sort(key=lambda d: (d['start_line'] != line, d['end_line'] - d['start_line']))
    return cands[0]


FN_KINDS = ('function', 'method')


def caller_of(r):
    for a in r['callers']:
        if a['local'] and not a.get('fn'):
            continue
        d = map_decl(r['file'], a['name'], a['line'], contain=r['line'])
        # a local function const is a definition only where the graph lists it as a function
        if d is not None and a['local'] and d['kind'] not in FN_KINDS:
            continue
        if d is not None:
            return f"{r['file']}:{d['name']}", d
    return r['file'], None


recs = [json.loads(l) for l in open(calls_path)]
edges = {}
unresolved = []  # (from, name, rec)
others = []  # calls resolved elsewhere: (from, name, target, rec)
unmapped = collections.Counter()
kinds = {}
for r in recs:
    c = r['callee']
    frm, _ = caller_of(r)
    r['from'] = frm
    tname = c.get('text', '').rsplit('.', 1)[-1].strip()
    if c.get('unresolved'):
        unresolved.append((frm, tname, r))
        continue
    if c.get('external'):
        others.append((frm, tname, 'external: ' + c['where'], r))
        continue
    if (c.get('local') and not c.get('fn')) or not c.get('name'):
        others.append((frm, tname, 'a local/parameter binding', r))
        continue
    d = map_decl(c['file'], c['name'], c['line'])
    if d is not None and c.get('local') and d['kind'] not in FN_KINDS:
        d = None
    if d is None:
        unmapped[c['kind']] += 1
        others.append((frm, c['name'], f"{c['kind']} {c['file']}:{c['line']} (no graph node)", r))
        continue
    if d['kind'] in ('class', 'interface', 'type', 'enum', 'struct'):
        continue
    to = f"{c['file']}:{d['name']}"
    kinds[to] = (d['kind'], c['kind'], c['file'], c['line'])
    others.append((frm, c['name'], to, r))
    key = (frm, to)
    if key not in edges:
        edges[key] = {'from': frm, 'to': to, 'line': r['line'], 'text': r['text'], 'via': c.get('via')}

inn = collections.defaultdict(set)
out = collections.defaultdict(set)
for (a, b) in edges:
    inn[b].add((a, b))
    out[a].add((a, b))
# unresolved calls per caller, and per name
unres_from = collections.defaultdict(list)
unres_name = collections.defaultdict(list)
for frm, nm, r in unresolved:
    unres_from[frm].append(nm)
    unres_name[nm].append(r)
repo_names = set()
for path in list(cache):
    for d in cache[path] or []:
        repo_names.add(short(d['name']))


def src_line(path, line):
    try:
        with open(os.path.join(repo, path)) as f:
            return f.read().split('\n')[line - 1]
    except Exception:
        return ''


def eligible(k):
    path, q = k.split(':', 1)
    if tre.search(path):
        return 'test file'
    kind, tskind, _, start = kinds[k]
    s = short(q)
    if s.startswith('#') or s.startswith('_'):
        return 'private'
    if tskind in ('FunctionDeclaration', 'VariableDeclaration') and 'export' not in src_line(path, start):
        return 'not exported'
    if unres_name.get(s):
        return f'{len(unres_name[s])} unresolved calls named {s}'
    bad = [n for n in unres_from.get(k, []) if n in repo_names]
    if bad:
        return f'unresolved calls in body: {bad[:3]}'
    n = len(inn[k] | out[k])
    if n < 3 or n > 40:
        return f'{n} edges'
    return None


pool = collections.defaultdict(list)
why_not = collections.Counter()
for k in sorted(kinds):
    w = eligible(k)
    if w:
        why_not[w.split(' ')[-1] if 'edges' in w else w.split(':')[0]] += 1
        continue
    tskind = kinds[k][1]
    bucket = {'MethodDeclaration': 'method', 'FunctionDeclaration': 'function'}.get(tskind, 'value')
    pool[bucket].append(k)
rng = random.Random(int(seed))
for b in pool:
    rng.shuffle(pool[b])
    # the better-connected first (stable among equals, so the seed still decides ties)
    pool[b].sort(key=lambda k: -min(len(inn[k] | out[k]), 25))
focus = list(force)
for k in force:
    print('forced', k, 'ineligible: ' + eligible(k) if k in kinds and eligible(k) else ('not a callee' if k not in kinds else 'eligible'))
quota = {'method': 14, 'value': 8}
for b in ['method', 'value']:
    for k in pool.get(b, []):
        if sum(1 for f in focus if f in pool[b]) >= quota[b]:
            break
        if k not in focus:
            focus.append(k)
for k in pool.get('function', []):
    if len(focus) >= 40:
        break
    if k not in focus:
        focus.append(k)
fset = set(focus)
truth_edges = sorted(
    (e for key, e in edges.items() if key[0] in fset or key[1] in fset),
    key=lambda e: (e['to'], e['from']))
# traps: a call site naming a focus symbol that the checker resolves elsewhere
traps = []
seen = set()
for frm, nm, target, r in others:
    for f in focus:
        if nm == short(f.split(':', 1)[1]) and target != f and (frm, f) not in edges and (frm, f) not in seen:
            if len([t for t in traps if t['to'] == f]) >= 2:
                continue
            seen.add((frm, f))
            traps.append({'kind': 'calls', 'from': frm, 'to': f, 'line': r['line'],
                          'why': f"`{r['text'].strip()[:70]}` at {r['file']}:{r['line']} resolves to {target}".replace(target, re.sub(r'\S*node_modules/', 'node_modules/', target))})
rng.shuffle(traps)
traps = sorted(traps[:25], key=lambda t: t['to'])
commit = subprocess.check_output(['git', 'rev-parse', 'HEAD'], cwd=repo).decode().strip()
with open(f'{name}.truth.json', 'w') as f:
    json.dump({'commit': commit, 'focus_symbols': focus,
               'calls': [{'from': e['from'], 'to': e['to'], 'line': e['line']} for e in truth_edges],
               'not_edges': traps, 'all_edges': len(edges), 'unmapped': dict(unmapped),
               'unresolved': len(unresolved), 'examples': truth_edges}, f, indent=1)
with open(f'{name}.report.txt', 'w') as f:
    print('pool', {b: len(v) for b, v in pool.items()}, 'excluded', dict(why_not), file=f)
    print('missing listings', sorted(missing_listing)[:20], len(missing_listing), file=f)
    for k in focus:
        print(f'{k:80} {kinds.get(k, ("?",))[0]:9} in {len(inn[k])} out {len(out[k])}', file=f)
    print('truth edges', len(truth_edges), 'traps', len(traps), file=f)
print(open(f'{name}.report.txt').read())
PY

# tsconfig paths (workspace packages by name), when the root tsconfig.json is plain JSON
paths_arg=()
if [ -f "$clone/tsconfig.json" ] &&
  python3 -c 'import json,sys; p=json.load(open(sys.argv[1])).get("compilerOptions",{}).get("paths"); json.dump(p,open(sys.argv[2],"w")) if p else sys.exit(1)' \
    "$clone/tsconfig.json" "$oracle/$name.paths.json" 2>/dev/null; then
  paths_arg=("$oracle/$name.paths.json")
fi
node "$oracle/calls.js" "$clone" "$oracle/$name.calls.jsonl" "${paths_arg[@]}"

# every code file's definitions as the graph names them
listing=$oracle/$name.listing
mkdir -p "$listing"
git -C "$clone" ls-files | grep -E '\.(ts|tsx|mts|cts|js|jsx|mjs|cjs)$' | while read -r f; do
  out=$listing/${f//\//__}.json
  [ -s "$out" ] && continue
  "$lynx" -C "$clone" --no-dense -q --json module-summary -k 10000 "$f" >"$out" 2>/dev/null || rm -f "$out"
done

cd "$oracle"
python3 truth.py "$name" "$clone" "$name.calls.jsonl" "$listing" "$testpat" "$seed" "$force"
