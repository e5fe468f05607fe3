// gatherPipelinedWrites(): a connection's writes held back until the check phase of the event
// loop's turn, then written together, in order; its end and its destruction come after them.
// A real TCP (or TLS) connection on 127.0.0.1:0; writes counted where net.Socket hands them to the system.
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, connect, type AddressInfo, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import tls from 'node:tls';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { GATHER_LIMIT, gatherPipelinedWrites, sendsGathered } from '../../../lib/server/pipelined-writes.js';
import { loadOrCreateDevCertificate, type DevCertificate } from '../../../lib/server/tls-certificate.js';

let certificateDir = '';
let certificate: DevCertificate;

test.before(async () => {
  certificateDir = await mkdtemp(join(tmpdir(), 'hk-pipelined-writes-'));
  certificate = await loadOrCreateDevCertificate(certificateDir);
});

test.after(() => rm(certificateDir, { recursive: true, force: true }));

interface Pair {
  /** The server's end, its writes counted. */
  socket: Socket;
  writes(): number;
  /** Everything the client has read. */
  received(): string;
  /** Resolves with everything read once the client's end has closed. */
  closed: Promise<string>;
  /** Has a client that was reading nothing read from now on. */
  startReading(): void;
  close(): Promise<void>;
}

/**
 * A connection to a server of its own: the server's end, and what its client reads. `over: 'tls'`
 * speaks TLS; `reading: false`, a client that reads nothing (a slow reader at its slowest).
 */
async function pair({ over = 'tcp', reading = true }: { over?: 'tcp' | 'tls'; reading?: boolean } = {}): Promise<Pair> {
  let accepted!: (socket: Socket) => void;
  const arrived = new Promise<Socket>((resolve) => (accepted = resolve));
  const server: Server = over === 'tls' ? tls.createServer({ key: certificate.key, cert: certificate.cert }, accepted) : createServer(accepted);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  const client = over === 'tls' ? tls.connect({ port, host: '127.0.0.1', rejectUnauthorized: false }) : connect(port, '127.0.0.1');
  client.on('error', () => {});
  let received = '';
  const read = (chunk: Buffer): void => void (received += chunk.toString('latin1'));
  if (reading) client.on('data', read);
  else client.pause();
  const closed = new Promise<string>((resolve) => client.once('close', () => resolve(received)));
  const socket = await arrived;
  socket.on('error', () => {});
  let writes = 0;
  const target = socket as Socket & { _writeGeneric: (...args: unknown[]) => unknown };
  const writeGeneric = target._writeGeneric;
  target._writeGeneric = function (...args: unknown[]) {
    writes++;
    return writeGeneric.apply(this, args);
  };
  return {
    socket,
    writes: () => writes,
    received: () => received,
    closed,
    startReading() {
      client.on('data', read);
      client.resume();
    },
    async close() {
      client.destroy();
      socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

async function readUntil(connection: Pair, text: string, timeout = 2_000): Promise<void> {
  for (let waited = 0; !connection.received().includes(text); waited += 5) {
    if (waited > timeout) throw new Error(`"${text}" did not arrive; read: ${JSON.stringify(connection.received())}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

test('writes made in the turn go out together in its check phase, in order, each completed at once', async () => {
  const connection = await pair();
  try {
    gatherPipelinedWrites(connection.socket, true);
    const completed: string[] = [];
    // Corked, as node:http writes a response's head and body: they come to the socket together (its _writev).
    connection.socket.cork();
    for (const text of ['one ', 'two ', 'three ']) connection.socket.write(text, () => completed.push(text));
    connection.socket.uncork();
    // Each in a tick of its own, as node:http writes pipelined responses.
    await new Promise((resolve) => process.nextTick(resolve));
    connection.socket.write('four', () => completed.push('four'));
    await new Promise((resolve) => process.nextTick(resolve));
    // Completed as far as the writers know, none written yet.
    assert.equal(completed, ['one ', 'two ', 'three ', 'four']);
    assert.is(connection.writes(), 0);
    await nextTurn();
    assert.is(connection.writes(), 1);
    await readUntil(connection, 'one two three four');
  } finally {
    await connection.close();
  }
});

test('writes after the turn go straight out, one each', async () => {
  const connection = await pair();
  try {
    gatherPipelinedWrites(connection.socket, true);
    connection.socket.write('held');
    await nextTurn();
    connection.socket.write('a');
    assert.is(connection.writes(), 2);
    connection.socket.write('b');
    await readUntil(connection, 'heldab');
    assert.is(connection.writes(), 3);
  } finally {
    await connection.close();
  }
});

test('a connection that has not pipelined is not held; once it has, each later request holds its turn\'s writes', async () => {
  const connection = await pair();
  try {
    gatherPipelinedWrites(connection.socket, false);
    connection.socket.write('a');
    assert.is(connection.writes(), 1);
    gatherPipelinedWrites(connection.socket, true);
    connection.socket.write('b');
    await nextTurn();
    assert.is(connection.writes(), 2);
    // The first request of a later burst, not pipelined itself: held with those behind it.
    gatherPipelinedWrites(connection.socket, false);
    connection.socket.write('c');
    gatherPipelinedWrites(connection.socket, true);
    connection.socket.write('d');
    assert.is(connection.writes(), 2);
    await nextTurn();
    assert.is(connection.writes(), 3);
    await readUntil(connection, 'abcd');
  } finally {
    await connection.close();
  }
});

test('a connection ended in the turn sends what was held, then ends', async () => {
  const connection = await pair();
  try {
    gatherPipelinedWrites(connection.socket, true);
    connection.socket.write('first ');
    connection.socket.end('last');
    assert.is(await connection.closed, 'first last');
  } finally {
    await connection.close();
  }
});

test('a connection destroyed in the turn sends what was held before it closes', async () => {
  const connection = await pair();
  try {
    gatherPipelinedWrites(connection.socket, true);
    connection.socket.write('said before the cut');
    connection.socket.destroy();
    assert.is(await connection.closed, 'said before the cut');
  } finally {
    await connection.close();
  }
});

test('what is held goes out with the write that passes the limit, whose completion is then the connection\'s', async () => {
  const connection = await pair();
  try {
    gatherPipelinedWrites(connection.socket, true);
    const half = 'h'.repeat(GATHER_LIMIT / 2);
    connection.socket.write(half);
    connection.socket.write(half);
    assert.is(connection.writes(), 0);
    connection.socket.write('!');
    assert.is(connection.writes(), 1);
    await nextTurn();
    await readUntil(connection, '!');
    assert.is(connection.received(), `${half}${half}!`);
  } finally {
    await connection.close();
  }
});

test('the limit counts a string\'s bytes: a UTF-8 body within it in characters but past it in bytes goes out at once, its completion the connection\'s', async () => {
  const connection = await pair();
  try {
    gatherPipelinedWrites(connection.socket, true);
    // 3 bytes a character in UTF-8: a third of the limit in characters, 2 bytes past it in bytes.
    const body = '\u20ac'.repeat(Math.ceil(GATHER_LIMIT / 3));
    assert.ok(body.length < GATHER_LIMIT && Buffer.byteLength(body) > GATHER_LIMIT);
    connection.socket.write(body, 'utf8');
    // Counted in characters, it was held and completed at once: thrice the limit could be.
    assert.is(connection.writes(), 1);
    connection.socket.write('!');
    await readUntil(connection, '!');
    assert.is(connection.received(), `${Buffer.from(body).toString('latin1')}!`);
  } finally {
    await connection.close();
  }
});

test('the limit counts a string\'s bytes in its own encoding: latin1 a byte a character, hex one for two', async () => {
  const connection = await pair();
  try {
    gatherPipelinedWrites(connection.socket, true);
    // 2 bytes a character in UTF-8, 1 in latin1: half the limit.
    connection.socket.write('\u00e9'.repeat(GATHER_LIMIT / 2), 'latin1');
    // Twice the limit in characters, half of it in bytes.
    connection.socket.write('ab'.repeat(GATHER_LIMIT / 2), 'hex');
    assert.is(connection.writes(), 0);
    await nextTurn();
    assert.is(connection.writes(), 1);
    await readUntil(connection, '\u00ab'.repeat(GATHER_LIMIT / 2));
    assert.is(connection.received(), '\u00e9'.repeat(GATHER_LIMIT / 2) + '\u00ab'.repeat(GATHER_LIMIT / 2));
  } finally {
    await connection.close();
  }
});

test('the limit counts from nothing again once what was written is out: a write that passed it, or one of the check phase, is not held against the next turns', async () => {
  const connection = await pair();
  try {
    const half = 'h'.repeat(GATHER_LIMIT / 2);
    // Written in the check phase, with no writer waiting on it.
    gatherPipelinedWrites(connection.socket, true);
    connection.socket.write(half);
    await nextTurn();
    await readUntil(connection, half);
    let expected = half;
    // Twice: the first burst ends with a write that passes the limit, whose completion is the socket's.
    for (const marker of ['1', '2']) {
      const before = connection.writes();
      gatherPipelinedWrites(connection.socket, true);
      connection.socket.write(half);
      connection.socket.write(half);
      assert.is(connection.writes(), before, `turn ${marker}: held up to the limit`);
      connection.socket.write(marker);
      assert.is(connection.writes(), before + 1, `turn ${marker}: past the limit, out at once`);
      expected += `${half}${half}${marker}`;
      await nextTurn();
      await readUntil(connection, `${half}${marker}`);
    }
    assert.is(connection.received(), expected);
  } finally {
    await connection.close();
  }
});

test('sendsGathered() tells whether writes taken for done are still held: never for a connection not gathered', async () => {
  const connection = await pair();
  try {
    assert.is(sendsGathered(connection.socket), false);
    gatherPipelinedWrites(connection.socket, false);
    assert.is(sendsGathered(connection.socket), false);
    gatherPipelinedWrites(connection.socket, true);
    assert.is(sendsGathered(connection.socket), false);
    connection.socket.write('held');
    assert.is(sendsGathered(connection.socket), true);
    await nextTurn();
    await readUntil(connection, 'held');
    assert.is(sendsGathered(connection.socket), false);
  } finally {
    await connection.close();
  }
});

test('writes queued behind one the system has not taken all go out, in order, once the client reads', async () => {
  const connection = await pair({ reading: false });
  try {
    const response = 'q'.repeat(GATHER_LIMIT - 1024);
    let turns = 0;
    let written = 0;
    let toldToWait = false;
    while (!toldToWait && turns++ < 400) {
      gatherPipelinedWrites(connection.socket, true);
      toldToWait = !connection.socket.write(response);
      written += response.length;
      await nextTurn();
    }
    assert.ok(toldToWait, `the writer was never told to wait in ${turns - 1} turns`);
    // Behind those, held in its turn and written in its check phase while they are not out.
    gatherPipelinedWrites(connection.socket, true);
    connection.socket.write('end!');
    written += 4;
    await nextTurn();
    connection.startReading();
    await readUntil(connection, 'end!', 10_000);
    assert.is(connection.received().length, written);
    assert.ok(connection.received().endsWith('qend!'));
  } finally {
    await connection.close();
  }
});

test('a failed write of what was held destroys the connection with its error: no writer is left to hear of it', async () => {
  const connection = await pair();
  try {
    const failure = new Error('write EPIPE');
    const socket = connection.socket as Socket & { _write: (chunk: unknown, encoding: unknown, callback: (error?: Error) => void) => void };
    // The system refuses the write, a tick later, as it does a write to a connection reset.
    socket._write = (_chunk, _encoding, callback) => void process.nextTick(() => callback(failure));
    const destroyed = new Promise<Error | undefined>((resolve) => socket.once('close', () => resolve(socket.errored ?? undefined)));
    gatherPipelinedWrites(socket, true);
    let completion = 'none';
    socket.write('held', (error) => (completion = error ? `failed: ${error.message}` : 'done'));
    await nextTurn();
    // Its writer heard it was done: held, completed at once.
    assert.is(completion, 'done');
    const outcome = await Promise.race([destroyed, new Promise((resolve) => setTimeout(() => resolve('still open'), 1_000))]);
    assert.is(outcome, failure);
  } finally {
    await connection.close();
  }
});

for (const over of ['tcp', 'tls'] as const) {
  test(`writes to a client that reads nothing push back on the writer once they are not going out: a turn's wait for the last turn's, over ${over}`, async () => {
    const connection = await pair({ over, reading: false });
    try {
      // A pipelined response a turn, each held and completed at once, as node:http writes them.
      const response = 'r'.repeat(GATHER_LIMIT - 1024);
      let turns = 0;
      let toldToWait = false;
      // 400 turns are 25 MB, far more than the connection's buffers take in.
      while (!toldToWait && turns++ < 400) {
        gatherPipelinedWrites(connection.socket, true);
        toldToWait = !connection.socket.write(response);
        await nextTurn();
      }
      // Without it, the writes went on completing at once, queued in the socket's handle; over TLS a
      // second write while the first was not out aborted the process (node's TLSWrap takes one at a time).
      assert.ok(toldToWait, `the writer was never told to wait in ${turns - 1} turns`);
    } finally {
      await connection.close();
    }
  });
}

test.run();
