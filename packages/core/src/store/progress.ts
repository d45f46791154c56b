/**
 * The progress a walk of the whole store reports (`sweep()`, `reencode()`): once after each
 * page, and once more when it stops part way (aborted or failing) if anything was done since,
 * since that last report is all a caller stopped part way learns of what was done.
 */

/** Reports of `progress`, which the walk updates in place, to `onProgress`. */
export function progressReports<P extends object>(
  progress: P,
  onProgress: ((progress: P) => void) | undefined,
): { report(): void; reportingStop<T>(walk: () => Promise<T>): Promise<T> } {
  let reported = JSON.stringify(progress);
  const report = () => {
    reported = JSON.stringify(progress);
    onProgress?.({ ...progress });
  };
  return {
    report,
    async reportingStop(walk) {
      try {
        return await walk();
      } catch (err) {
        if (JSON.stringify(progress) !== reported) report();
        throw err;
      }
    },
  };
}
