/**
 * The architecture, as rules (`tests/architecture.test.ts` runs them; `npx depcruise src` shows them).
 * Arrows point inward: cli → app → domain ← adapters; only the composition root (src/compose/)
 * imports every layer. Type-only imports count: a cycle of types is still a cycle for a reader.
 */
module.exports = {
  forbidden: [
    { name: 'no-circular', severity: 'error', comment: 'Files that import each other cannot be read one at a time.', from: {}, to: { circular: true } },
    { name: 'cli-not-to-adapters', severity: 'error', comment: 'The CLI parses and renders: it reaches adapters only through the composition root.', from: { path: '^src/cli/' }, to: { path: '^src/adapters/' } },
    {
      name: 'cli-only-use-cases',
      severity: 'error',
      comment: "The CLI parses and renders: it asks the app's use cases (compose/use-cases.ts, and the console's compose/console.ts), never their parts.",
      from: { path: '^src/cli/' },
      to: { path: '^src/(app/|compose/(?!(use-cases|console)[.]ts$))' },
    },
    { name: 'adapters-not-to-app', severity: 'error', comment: 'Adapters implement the domain\'s ports; they never reach into use cases.', from: { path: '^src/adapters/' }, to: { path: '^src/(app|cli)/' } },
    { name: 'app-not-to-outer', severity: 'error', comment: 'Use cases talk to the world through ports: never to adapters or the CLI.', from: { path: '^src/app/' }, to: { path: '^src/(adapters|cli|compose)' } },
    { name: 'domain-is-pure', severity: 'error', comment: 'The domain imports zod and itself only.', from: { path: '^src/domain/' }, to: { path: '^src/(app|adapters|cli|compose|config)' } },
    { name: 'domain-no-node', severity: 'error', comment: 'The domain does no I/O.', from: { path: '^src/domain/' }, to: { dependencyTypes: ['core'] } },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'require', 'node', 'default'], extensions: ['.ts', '.js'] },
    moduleSystems: ['es6'],
  },
};
