// Ends the run with one plain line, "tests: N passed, N failed, N skipped",
// which CI reads regardless of the runner's own (colourful) summary.
import type { Reporter, TestModule } from 'vitest/node';

export default class SummaryReporter implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>): void {
    const count = { passed: 0, failed: 0, skipped: 0 };
    for (const module of testModules) {
      let failedHere = 0;
      for (const test of module.children.allTests()) {
        const state = test.result().state;
        if (state === 'passed') count.passed++;
        else if (state === 'failed') failedHere++;
        else count.skipped++;
      }
      // A file that failed with no failed test (it did not load, or a hook threw and its
      // tests were skipped) is a failure all the same.
      count.failed += failedHere > 0 || module.state() !== 'failed' ? failedHere : 1;
    }
    process.stdout.write(
      `\ntests: ${count.passed} passed, ${count.failed} failed, ${count.skipped} skipped\n`,
    );
  }
}
