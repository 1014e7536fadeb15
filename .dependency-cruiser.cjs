// Dependency rules for src/, checked by `npm run check:deps` (part of `npm test`).
//
// Paths in the rules are relative to the folder the cruise runs from (the project root), so
// test/contract/dependencyRules.test.ts can run the same rules on a fixture tree by pointing
// `baseDir` at a temporary folder. Type-only imports count (tsPreCompilationDeps), so a rule
// cannot be dodged with `import type`.

/** npm packages src/domain/ may use: pure computation, no I/O. */
const DOMAIN_PACKAGES = ['decimal.js', 'fastest-levenshtein', 'ipaddr.js', 'csv-stringify'];

/** Node builtins src/domain/ may use: computation only (no fs, net, http, child_process, ...). */
const DOMAIN_BUILTINS = ['assert', 'buffer', 'crypto', 'string_decoder', 'url', 'util', 'zlib'];

/** Transport libraries the use cases must not know about (their @types packages included). */
const TRANSPORT_PACKAGES = ['koa', 'koa-body', 'openapi-backend', '@koa/[^/]+', 'koa__[^/]+'];

/** The HTTP framework: what only src/http/ and the app wiring may know (@types included). */
const KOA_PACKAGES = ['koa', 'koa-body', '@koa/[^/]+', 'koa__[^/]+'];

const escape = (name) => name.replace(/[.]/g, '\\.');
/** Matches a resolved path inside one of the packages or its @types package. */
const packages = (names) => `(^|/)node_modules/(@types/)?(${names.map(escape).join('|')})/`;
const builtins = (names) => `^(node:)?(${names.join('|')})$`;

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'domain-is-pure',
      severity: 'error',
      comment:
        'src/domain/ is pure business logic: it may import only src/domain/, the generated API types ' +
        `(generated/*.d.ts), the npm packages ${DOMAIN_PACKAGES.join(', ')} and the Node builtins ` +
        `${DOMAIN_BUILTINS.join(', ')}. Move I/O (store, fs, network, HTTP) to a service and pass ` +
        'the data in.',
      from: { path: '^src/domain/' },
      to: {
        pathNot: [
          '^src/domain/',
          '^generated/[^/]+\\.d\\.ts$',
          packages(DOMAIN_PACKAGES),
          builtins(DOMAIN_BUILTINS),
        ],
      },
    },
    {
      name: 'store-stays-below',
      severity: 'error',
      comment:
        'src/store/ is the bottom layer: it must not import services, HTTP edge, operation ' +
        'handlers, dashboard, contract or CLI code. Pass what the store needs in as arguments.',
      from: { path: '^src/store/' },
      to: { path: '^src/(services|http|operations|dashboard|contract|cli)/' },
    },
    {
      name: 'services-know-no-transport',
      severity: 'error',
      comment:
        'src/services/ holds the use cases and must not know the transport: no src/http/, ' +
        'src/operations/, src/dashboard/, koa, @koa/*, koa-body or openapi-backend. Take plain ' +
        'data in and return plain data (or throw a domain error); the handler maps it to HTTP.',
      from: { path: '^src/services/' },
      to: {
        path: ['^src/(http|operations|dashboard)/', packages(TRANSPORT_PACKAGES)],
      },
    },
    {
      name: 'handlers-know-no-koa',
      severity: 'error',
      comment:
        'Operation handlers (src/operations/) and the handler contract (src/contract/) must not know ' +
        'the HTTP framework: no koa, @koa/* or koa-body. What a handler needs of the transport (a ' +
        'signal for the client going away, the multipart upload) is on RequestContext, provided by ' +
        'src/http/.',
      from: { path: '^src/(operations|contract)/' },
      to: { path: packages(KOA_PACKAGES) },
    },
    {
      name: 'contract-above-store',
      severity: 'error',
      comment:
        'src/contract/ (the handler contract, principals, uploads) is declared from the spec, above ' +
        'the layers that fill it: it must not import src/store/ or src/banks/. Declare the shape ' +
        'here and let their records satisfy it structurally.',
      from: { path: '^src/contract/' },
      to: { path: '^src/(store|banks)/' },
    },
    {
      name: 'only-app-wires-handlers',
      severity: 'error',
      comment:
        'Operation handlers (src/operations/) and dashboard handlers (src/dashboard/) are wired ' +
        'in by src/app.ts only; nothing else may import them (files inside the same folder may ' +
        'import each other). Share code through src/services/ or src/http/ instead.',
      // $1 is the top folder (or file) under src/ the import comes from; imports within that
      // same folder are allowed.
      from: { path: '^(src/[^/]+)', pathNot: '^src/app\\.ts$' },
      to: { path: '^src/(operations|dashboard)/', pathNot: '^$1/' },
    },
    {
      name: 'dashboard-calls-services-only',
      severity: 'error',
      comment:
        'Dashboard pages (src/dashboard/) are thin views over the use cases: they call src/services/ ' +
        'and never the store, the event outbox, bank connectors, the outbound client, the admin CLI ' +
        'or the API handlers. A page that needs data no service gives gets a new use case, so no ' +
        'business rule is written twice.',
      from: { path: '^src/dashboard/' },
      to: { path: '^src/(store|events|banks|net|cli|operations)/' },
    },
    {
      name: 'edge-calls-no-use-case',
      severity: 'error',
      comment:
        'src/http/ is the transport edge (middleware, parsing, errors) and must not import ' +
        'src/services/ or src/operations/: use cases reach the edge through the request context.',
      from: { path: '^src/http/' },
      to: { path: '^src/(services|operations)/' },
    },
    {
      name: 'no-cycles',
      severity: 'error',
      comment:
        'No circular dependencies in src/ (type-only imports count too): break the cycle by ' +
        'moving the shared part into a module both sides import.',
      from: { path: '^src/' },
      to: { circular: true },
    },
    {
      name: 'not-to-unresolvable',
      severity: 'error',
      comment:
        'An import that does not resolve to a file or package (typo, missing .ts extension, ' +
        'package not installed) would slip past every other rule here: fix the specifier.',
      from: {},
      to: { couldNotResolve: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    // Keep type-only imports (`import type`, generated/api.d.ts) in the graph: rules apply to them.
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['types', 'import', 'node', 'require', 'default'],
      mainFields: ['types', 'typings', 'module', 'main'],
      extensions: ['.ts', '.d.ts', '.js', '.mjs', '.cjs', '.json'],
    },
    reporterOptions: {
      text: { highlightFocused: true },
    },
  },
};
