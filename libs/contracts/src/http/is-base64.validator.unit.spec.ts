import { isStrictBase64 } from './is-base64.validator';

describe('isStrictBase64', () => {
  it('accepts padded standard base64, the empty string included', () => {
    for (const bytes of [0, 1, 2, 3, 4, 5, 300]) expect(isStrictBase64(Buffer.alloc(bytes, 0xfb).toString('base64'))).toBe(true);
  });

  it('refuses other alphabets, bad padding, padding inside and lengths not a multiple of 4', () => {
    for (const value of ['not base64!', 'abc', 'ab=c', 'a===', '====', '-_8=', 'QUJD\n', 'QQ==QQ==']) expect({ value, ok: isStrictBase64(value) }).toEqual({ value, ok: false });
  });

  it('checks megabytes without overflowing the stack (an 8 MiB file is about 11 MB of base64)', () => {
    const content = Buffer.alloc(8 * 1024 * 1024 + 1, 0x5a).toString('base64');
    expect(isStrictBase64(content)).toBe(true);
    expect(isStrictBase64(`${content.slice(0, -4)}*AAA`)).toBe(false);
  });
});
