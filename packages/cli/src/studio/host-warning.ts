/**
 * What `ckpt studio --host` says of the address it listens on: nothing for a loopback address,
 * which only this machine reaches; a warning for any other, and for the wildcard addresses
 * (which the printed address shows as 127.0.0.1) how another machine opens it.
 */

/** The warning for listening on `host` at `port`, or null where only this machine can reach it. */
export function hostWarning(host: string, port: number, write: boolean): string | null {
  if (/^(127(\.\d{1,3}){3}|localhost|::1|\[::1\])$/i.test(host)) return null;
  const wildcard = host === '0.0.0.0' || host === '::' || host === '[::]';
  const where = wildcard ? 'every address of this machine' : host;
  const reads = `can read the store${write ? ' and change it' : ''}`;
  return `warning: listening on ${where} as --host asks, not on 127.0.0.1 alone: anyone who can reach port ${port} there and has the token (in the address above) ${reads}.${wildcard ? " From another machine, open the address above with this machine's name or address in place of 127.0.0.1." : ''}`;
}
