// Loaded with `node --import` into a process the bench runs: on exit, its peak resident
// memory (in KiB) goes to stderr, where the bench reads it.
process.on('exit', () => {
  process.stderr.write(`\nmaxrss ${process.resourceUsage().maxRSS}\n`);
});
