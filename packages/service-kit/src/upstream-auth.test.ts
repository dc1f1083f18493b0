import { constants, createPublicKey, generateKeyPairSync, verify } from 'node:crypto';
import { kalshiHeaders, kalshiMessage, kalshiPrivateKey, polymarketUsHeaders, polymarketUsKey } from './upstream-auth';

describe('upstream signing shared by the gateway and the recorder', () => {
  it('signs a Kalshi WebSocket handshake over timestamp + GET + /trade-api/ws/v2 with RSA-PSS', () => {
    const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const key = kalshiPrivateKey(privateKey.export({ type: 'pkcs1', format: 'pem' }).toString());
    const headers = kalshiHeaders('key-id', key, 'GET', '/trade-api/ws/v2', 1703123456789);
    expect(headers['KALSHI-ACCESS-KEY']).toBe('key-id');
    expect(headers['KALSHI-ACCESS-TIMESTAMP']).toBe('1703123456789');
    const ok = verify(
      'sha256',
      Buffer.from(kalshiMessage(1703123456789, 'GET', '/trade-api/ws/v2')),
      { key: publicKey, padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: constants.RSA_PSS_SALTLEN_DIGEST },
      Buffer.from(headers['KALSHI-ACCESS-SIGNATURE'] ?? '', 'base64'),
    );
    expect(ok).toBe(true);
    const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ type: 'pkcs8', format: 'pem' });
    expect(() => kalshiPrivateKey(ec.toString())).toThrow(/RSA/);
  });

  it('signs a Polymarket US handshake with Ed25519 over timestamp + GET + /v1/ws/markets', () => {
    const { privateKey } = generateKeyPairSync('ed25519');
    const seed = privateKey.export({ format: 'der', type: 'pkcs8' }).subarray(-32);
    const pub = createPublicKey(privateKey).export({ format: 'der', type: 'spki' }).subarray(-32);
    const key = polymarketUsKey(Buffer.concat([seed, pub]).toString('base64'));
    const headers = polymarketUsHeaders('k', key, 'GET', '/v1/ws/markets', 1705420800000);
    expect(headers['X-PM-Timestamp']).toBe('1705420800000');
    expect(
      verify(
        null,
        Buffer.from('1705420800000GET/v1/ws/markets'),
        createPublicKey(privateKey),
        Buffer.from(headers['X-PM-Signature'] ?? '', 'base64'),
      ),
    ).toBe(true);
  });
});
