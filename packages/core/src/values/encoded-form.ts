/**
 * How a value the codecs changed begins when a store hands it to a backend (see codecs/chain.ts
 * for the whole form, and adapter/stored-bytes.ts for its bytes). No JSON text begins so.
 */
export const ENCODED_MARKER = 'ckpt1;';
