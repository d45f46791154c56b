/** Encoded values as bytes, for backends that can hold bytes: exact both ways, and smaller. */
import { randomBytes } from 'node:crypto';
import { memory } from '@ckpt/memory';
import { describe, expect, it } from 'vitest';
import { storedBytesOf, storedBytesOrText, textFromStoredBytes } from '../src/adapter.js';
import { CheckpointStore, compress, encrypt } from '../src/index.js';

describe('storedBytesOf and textFromStoredBytes', () => {
  it('store an encoded value as its bytes behind a short header, and read it back exactly', async () => {
    const store = new CheckpointStore(memory(), {
      codecs: [compress('gzip'), encrypt({ keys: { k1: randomBytes(32) }, current: 'k1' })],
    });
    await store.checkpoint('a session; with = signs', {
      text: 'long enough to compress. '.repeat(50),
    });
    const stored = (await store.backend.load('a session; with = signs', null))!.data;
    const bytes = storedBytesOf(stored);
    const payload = stored.slice(stored.lastIndexOf(';') + 1);
    expect(bytes.subarray(0, 7).toString('latin1')).toBe('ckpt1b;');
    expect(bytes.length).toBe(
      stored.length - payload.length + 1 + Buffer.from(payload, 'base64').length,
    );
    expect(textFromStoredBytes(bytes)).toBe(stored);
    expect(textFromStoredBytes(new Uint8Array(bytes))).toBe(stored);
  });

  it('keep JSON text, and anything not exactly in the encoded form, as UTF-8 bytes', () => {
    const texts = [
      '{"a":"é ✓ 𝄞"}',
      '"short"',
      'ckpt1;gzip',
      'ckpt1;gzip;;AAA',
      'ckpt1;gzip;;AAB=',
      'ckpt1;gzip;a;b;AAAA',
      'ckpt1;gzip;é;AAAA',
      'ckpt1;;;',
    ];
    for (const text of texts) {
      expect(textFromStoredBytes(storedBytesOf(text))).toBe(text);
    }
    expect(storedBytesOf('{"a":1}').toString('utf8')).toBe('{"a":1}');
    expect(storedBytesOf('ckpt1;gzip;;AAB=').toString('utf8')).toBe('ckpt1;gzip;;AAB=');
  });

  it('hand a driver that sends strings as UTF-8 a plain value as it is, and the bytes of an encoded one', () => {
    const texts = ['{"a":"é ✓ 𝄞"}', '"short"', 'ckpt1;gzip;s;AAAA', 'ckpt1;gzip;;AAB=', 'ckpt1;;;'];
    for (const text of texts) {
      const given = storedBytesOrText(text);
      const sent = typeof given === 'string' ? Buffer.from(given, 'utf8') : given;
      expect(sent.equals(storedBytesOf(text))).toBe(true);
    }
    expect(storedBytesOrText('{"a":"é"}')).toBe('{"a":"é"}');
    expect(Buffer.isBuffer(storedBytesOrText('ckpt1;gzip;s;AAAA'))).toBe(true);
  });

  it('read text as it is: a row written before its column held bytes', () => {
    expect(textFromStoredBytes('ckpt1;gzip;s;AAAA')).toBe('ckpt1;gzip;s;AAAA');
    expect(textFromStoredBytes(Buffer.from('ckpt1;gzip;s;AAAA'))).toBe('ckpt1;gzip;s;AAAA');
  });
});
