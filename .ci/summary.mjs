// Prints the closing `N passed, N failed[, N skipped]` line from vitest's JSON report.
import { readFileSync } from 'node:fs';

const report = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const skipped = report.numPendingTests + report.numTodoTests;
const parts = [`${report.numPassedTests} passed`, `${report.numFailedTests} failed`];
if (skipped > 0) parts.push(`${skipped} skipped`);
console.log(parts.join(', '));
process.exit(report.numFailedTests > 0 || !report.success ? 1 : 0);
