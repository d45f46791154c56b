export {
  CkptSaver,
  type CkptSaverOptions,
  type PruneThreadOptions,
  type ThreadCheckpoints,
} from './saver.js';
export type { TranscriptMessage } from './transcript.js';
