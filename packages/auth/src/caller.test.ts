import { presentedKey } from './caller';

const basic = (credentials: string) => `Basic ${Buffer.from(credentials).toString('base64')}`;
const KEY = 'dg_0123456789abcdefghijklmnopqrstuvwxyzABC';

describe('the key a request presents', () => {
  it('X-API-Key, as before', () => {
    expect(presentedKey({ 'x-api-key': KEY })).toBe(KEY);
    expect(presentedKey({})).toBeUndefined();
    expect(presentedKey({ 'x-api-key': '' })).toBeUndefined();
  });

  it('HTTP Basic with the key as the user name; the password is empty or ignored', () => {
    expect(presentedKey({ authorization: basic(`${KEY}:`) })).toBe(KEY);
    expect(presentedKey({ authorization: basic(`${KEY}:anything:at all`) })).toBe(KEY);
    expect(presentedKey({ authorization: basic(KEY) })).toBe(KEY);
    expect(presentedKey({ authorization: `bAsIc \t${Buffer.from(`${KEY}:`).toString('base64')} ` })).toBe(KEY);
  });

  it('X-API-Key wins when both are present', () => {
    expect(presentedKey({ 'x-api-key': 'dg_header', authorization: basic(`${KEY}:`) })).toBe('dg_header');
    expect(presentedKey({ 'x-api-key': '', authorization: basic(`${KEY}:`) })).toBe(KEY);
  });

  it('a Basic header that does not decode presents a key that cannot be valid; other schemes are ignored', () => {
    expect(presentedKey({ authorization: 'Basic' })).toBe('');
    expect(presentedKey({ authorization: 'Basic not*base64!' })).toBe('');
    expect(presentedKey({ authorization: 'Basic a b' })).toBe('');
    expect(presentedKey({ authorization: basic(`:${KEY}`) })).toBe('');
    expect(presentedKey({ authorization: `Bearer ${KEY}` })).toBeUndefined();
    expect(presentedKey({ authorization: `Basicx ${KEY}` })).toBeUndefined();
  });
});
