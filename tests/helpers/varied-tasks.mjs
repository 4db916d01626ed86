// Tasks as people write them, shared by the cost tests (tests/cli/memory-cost.test.ts) and the cost
// benchmark (bench/cost.bench.mjs).

/** Nine different tasks, as people write them: a request, and the facts it comes with (each one the floor lets through). */
export const TASKS = [
  'Choose the cache for the billing service. The current Memcached cluster, owned by Dana Ruiz, reaches end of support on 30 June 2027.',
  'Plan the migration of the user database to PostgreSQL 16. We agreed on a freeze window starting 14 March 2027; the budget is $40,000.',
  'Review the on-call rota for the payments team. Alex Kim leads it from 1 February 2027 and must keep pages under 5 per week.',
  'Recommend whether the platform team should adopt OpenTelemetry for tracing. It approved a trial on 3 services in Q2 2027.',
  'Draft the rollout plan for the new search ranking. The team set 22 April 2027 as the date, with a 10% canary first.',
  'Assess the vendor contract with Acme Corp. It renews on 2027-05-01 at 120,000 EUR a year unless cancelled 60 days before.',
  'Propose a retention policy for audit logs. Legal decided to keep them for 7 years; storage costs 0.02 USD per GB a month.',
  'Choose a feature-flag service. LaunchDarkly was rejected in 2026 for cost; the team will evaluate Unleash and Flagsmith.',
  'Plan the office move to the Harbour building. The move starts on 1 September 2027 and Maria Lopez owns it.',
];
