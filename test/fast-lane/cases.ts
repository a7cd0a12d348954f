import { persistedCases } from './cases-persisted.ts';
import { planCases } from './cases-plans.ts';
import { refusalCases } from './cases-refusals.ts';
import { requestCases } from './cases-requests.ts';

/** The lanes' corpus, in the order lanes.test.ts runs it (its metric series count every case). */
export const CASES = [...requestCases, ...planCases, ...refusalCases, ...persistedCases];
