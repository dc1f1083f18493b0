import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { WebSocket, WebSocketServer } from 'ws';
import { Frame } from './frame';

describe('Frame', () => {
  it('frames text of every header size as a WebSocket client parses it', async () => {
    // 7-bit, 16-bit and 64-bit payload lengths; multi-byte characters count in bytes.
    const texts = ['a', 'é'.repeat(70), 'x'.repeat(300), 'y'.repeat(70_000)];
    const wss = new WebSocketServer({ noServer: true, perMessageDeflate: false });
    const http = createServer();
    // As the gateway does: the frames are written straight to the upgraded socket, not through `ws`.
    http.on('upgrade', (req, socket, head) => {
      wss.handleUpgrade(req, socket, head, () => {
        for (const text of texts) {
          socket.write(Frame.encode(text));
          socket.write(Frame.text(Buffer.from(text)).bytes);
        }
      });
    });
    await new Promise<void>((r) => http.listen(0, '127.0.0.1', r));
    const { port } = http.address() as AddressInfo;
    const got: string[] = [];
    const client = new WebSocket(`ws://127.0.0.1:${port}`, { perMessageDeflate: false });
    await new Promise<void>((resolve, reject) => {
      client.on('message', (data, isBinary) => {
        expect(isBinary).toBe(false);
        got.push(String(data));
        if (got.length === texts.length * 2) resolve();
      });
      client.on('error', reject);
      client.on('close', () => reject(new Error(`closed after ${got.length} messages`)));
    });
    expect(got).toEqual(texts.flatMap((t) => [t, t]));
    client.terminate();
    await new Promise((r) => http.close(r));
  });
});
