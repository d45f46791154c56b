export { CkptSaver, type CkptSaverOptions, type PruneThreadOptions } from './saver.js';
export type { TranscriptMessage } from './transcript.js';
