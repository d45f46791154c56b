/**
 * What to do when a server refuses a login, a database or a privilege, drops a connection or
 * takes none, or when the URL names another kind of server: the words every server adapter
 * uses, and the hook (`errorHint`) built from its driver's codes for them.
 */
import { CONNECTION_LOST_HINT, type ErrorHint, errorCode } from '../values/errors.js';

/** The remedies a server adapter's `errorHint` names, worded alike on every backend. */
export const SERVER_HINTS = {
  loginRefused: 'the server refused the login: check the user and password in the URL',
  missingDatabase:
    'the database named in the URL does not exist: create it (CREATE DATABASE) or name one that does',
  missingPrivilege:
    "the user lacks a privilege the store needs: grant those listed in the README of the backend's package",
  /**
   * For a connection the server dropped or that broke during a call, in whatever words the
   * driver reports it (the server's shutdown, a killed session, a closed socket).
   */
  connectionLost: CONNECTION_LOST_HINT,
  /** For a server that refuses new connections while it starts, stops or recovers. */
  serverNotReady:
    'the server takes no connections now (it is starting up, shutting down or recovering), so the call did not run: retry it once the server is up',
} as const;

/** An `errorHint` that looks a failure's `code` up in `hints` (a driver's codes to remedies). */
export function hintsByCode(hints: Readonly<Record<string, string>>): ErrorHint {
  return (err) => {
    const code = errorCode(err);
    return Object.hasOwn(hints, code) ? hints[code] : undefined;
  };
}

/** How a server that is not of the kind the URL names gives itself away to the driver. */
export type OtherServerSymptom =
  /** It answered, in a protocol the driver cannot read. */
  | 'garbled'
  /** It closed the connection before answering. */
  | 'closed'
  /**
   * Nothing answered until the driver gave up: another kind of server that waits for its
   * client to speak first, as the driver does, or a network that drops the connection.
   */
  | 'silent';

/**
 * How long a store that opens its own connections waits for a server's first answer, unless
 * the URL says otherwise: what mysql2 and ioredis wait by default, where pg would wait forever.
 */
export const CONNECT_TIMEOUT_MS = 10_000;

// The ports a URL that names the wrong server most often carries.
const USUAL_PORTS = 'by default PostgreSQL listens on 5432, MySQL on 3306 and Redis on 6379';

/**
 * What to say when the server at `address` (`host:port`) does not speak `protocol`
 * (`'PostgreSQL'`, `'MySQL'`, `'Redis'`): the URL most likely names another server's port.
 */
export function otherServerHint(
  protocol: string,
  address: string,
  symptom: OtherServerSymptom,
): string {
  switch (symptom) {
    case 'garbled':
      return `the server at ${address} does not speak the ${protocol} protocol, so the URL probably names another server's port (${USUAL_PORTS}): fix the port in the URL`;
    case 'closed':
      return `the server at ${address} closed the connection before answering as ${protocol} does: it is probably another kind of server (${USUAL_PORTS}), or one that wants TLS; check the port and the scheme of the URL`;
    case 'silent':
      return `nothing at ${address} answered as ${protocol} in time: the URL may name another kind of server's port, which waits silently for its own protocol (${USUAL_PORTS}), or the network may drop the connection; check the port in the URL, then the host and the network`;
  }
}

/** `host:port` of a server URL (`defaultPort` when it names none), or undefined when it cannot be read. */
export function urlAddress(url: string, defaultPort: number): string | undefined {
  try {
    const { hostname, port } = new URL(url);
    return hostname ? `${hostname}:${port || defaultPort}` : undefined;
  } catch {
    return undefined;
  }
}
