export { CkptSaver, type CkptSaverOptions, type PruneThreadOptions } from './saver.js';
