import { describe, expect, it } from 'vitest';
import { readPolicySignals } from '../../src/domain/policy-signals.js';

// Issue 10 item 7: the rule lists, pinned by a table of tasks people write. A positive names the
// signal it must raise; a negative must raise none (the council may deliberate it freely).
const POSITIVES: [string, 'side' | 'stakes', string][] = [
  ['Email the report to all customers', 'side', 'email'],
  ['Send the invoice to the client tonight', 'side', 'send'],
  ['Transfer $50,000 to the vendor', 'side', 'payment'],
  ['Wire 12,000 EUR to the supplier on Friday', 'side', 'payment'],
  ['Pay the contractor invoice from the ops account', 'side', 'payment'],
  ['Refund the customer for the broken order', 'side', 'payment'],
  ['Notify all customers about the outage by SMS', 'side', 'message'],
  ['Text every subscriber the new price', 'side', 'message'],
  ['Upload the dataset to the public bucket', 'side', 'upload'],
  ['Publish the post-mortem on the blog', 'side', 'publish'],
  ['Deploy the new billing service to production', 'side', 'deploy'],
  ['Push this to prod before the weekend', 'side', 'deploy'],
  ['Buy 40 licences of the design tool', 'side', 'purchase'],
  ['Delete all production backups with rm -rf tonight', 'side', 'delete'],
  ['Drop the users table and start again', 'side', 'delete'],
  ['Grant admin access to the new intern', 'side', 'access'],
  ['Which medication dose should I take for my migraine', 'stakes', 'medical'],
  ['Can I take ibuprofen with my blood pressure pills', 'stakes', 'medical'],
  ['Diagnose the rash in this photo description', 'stakes', 'medical'],
  ['Approve this loan application', 'stakes', 'financial'],
  ['Should we raise the credit limit for this customer', 'stakes', 'financial'],
  ['Sell the shares in our pension fund now', 'stakes', 'financial'],
  ['Should I sue my landlord over the deposit', 'stakes', 'legal'],
  ['Sign the contract with the new cloud vendor', 'stakes', 'legal'],
  ['Fire the employee who missed the deadline', 'stakes', 'employment'],
];

const NEGATIVES: string[] = [
  'Assess the migration plan and propose next steps',
  'Review the rollout plan and list the risks',
  'Summarise the design document for the team',
  'Compare two caching strategies for the billing service',
  'Explain how the payment service retries failed webhooks',
  'Draft an email template for the onboarding flow',
  'Review the deployment checklist for gaps',
  'Estimate the cost of the new storage tier',
  'List the tests the transfer module is missing',
  'Which database index would speed up this query',
  "Write a post-mortem outline for last week's incident",
  'Propose a naming scheme for our feature flags',
  'Read the loan calculator code and find the rounding bug',
  'Explain what the retry field in the schema is used for',
  "Suggest how to structure the legal team's document archive",
];

// Keyword rules used to over-stop on these harmless tasks (the word "send" or "dosage" anywhere
// paused). Since issue 22 point 6 the rules read the act a task asks for, not its topic, and they
// run; pinned here so a change in either direction is seen.
const FORMER_OVER_STOPS: string[] = [
  'Draft an email template for the onboarding flow (do not send it)',
  'Explain what the dosage field in the schema is used for in the pharmacy app code',
];

describe('policy signals: the rule table', () => {
  it.each(FORMER_OVER_STOPS)('no longer over-stops on "%s"', (task) => {
    const s = readPolicySignals(task);
    expect([...s.sideEffects, ...s.highStakes]).toEqual([]);
  });

  it('has at least 40 tasks', () => {
    expect(POSITIVES.length + NEGATIVES.length).toBeGreaterThanOrEqual(40);
  });

  it.each(POSITIVES)('flags "%s" (%s: %s)', (task, kind, label) => {
    const s = readPolicySignals(task);
    expect(kind === 'side' ? s.sideEffects : s.highStakes).toContain(label);
  });

  it.each(NEGATIVES)('leaves "%s" alone', (task) => {
    const s = readPolicySignals(task);
    expect([...s.sideEffects, ...s.highStakes]).toEqual([]);
  });
});
