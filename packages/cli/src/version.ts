/** The package's version, for `ckpt --version`; the build puts it in the bundle. */
import manifest from '../package.json' with { type: 'json' };

/** The version in this package's package.json. */
export const VERSION: string = manifest.version;
