/**
 * A command line that cannot be run as given (a missing store, a file that cannot be read, a
 * session named twice): one line on stderr saying what to give instead, and exit status 2.
 */
export class UsageError extends Error {}
