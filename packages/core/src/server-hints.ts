/**
 * What to do when a server refuses a login, a database or a privilege: the words every server
 * adapter uses, and the hook (`errorHint`) built from its driver's codes for them.
 */
import { type ErrorHint, errorCode } from './errors.js';

/** The remedies a server adapter's `errorHint` names, worded alike on every backend. */
export const SERVER_HINTS = {
  loginRefused: 'the server refused the login: check the user and password in the URL',
  missingDatabase:
    'the database named in the URL does not exist: create it (CREATE DATABASE) or name one that does',
  missingPrivilege:
    "the user lacks a privilege the store needs: grant those listed in the README of the backend's package",
} as const;

/** An `errorHint` that looks a failure's `code` up in `hints` (a driver's codes to remedies). */
export function hintsByCode(hints: Readonly<Record<string, string>>): ErrorHint {
  return (err) => {
    const code = errorCode(err);
    return Object.hasOwn(hints, code) ? hints[code] : undefined;
  };
}
