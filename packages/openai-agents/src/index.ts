export { CkptSession, type CkptSessionOptions } from './session.js';
