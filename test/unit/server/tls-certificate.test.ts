import { X509Certificate, createPrivateKey } from 'node:crypto';
import { chmod, mkdir, mkdtemp, readFile, rm, stat, utimes, writeFile } from 'node:fs/promises';
import { execFileSync } from 'node:child_process';
import { readlinkSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { generate } from 'selfsigned';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { TlsCertificateError, loadCertificateFiles, loadOrCreateDevCertificate, octal } from '../../../lib/server/tls-certificate.js';

const DAY_MS = 24 * 60 * 60 * 1000;
/** As the lock records it: this process's pid namespace, null where there is none. */
const PID_NAMESPACE = (() => {
  try {
    return readlinkSync('/proc/self/ns/pid');
  } catch {
    return null;
  }
})();
let root = '';
let counter = 0;

test.before(async () => {
  root = await mkdtemp(join(tmpdir(), 'hk-tls-'));
});

test.after(async () => {
  await rm(root, { recursive: true, force: true });
});

/** A directory that does not exist yet, so the code under test has to make it. */
function freshDir(): string {
  return join(root, `case-${++counter}`, 'var', 'tls');
}

/** A certificate for localhost (EC P-256) valid from `notBeforeDate` to `notAfterDate`. */
function certificateValid(notBeforeDate: Date, notAfterDate: Date): Promise<{ cert: string; private: string }> {
  return generate([{ name: 'commonName', value: 'localhost' }], {
    keyType: 'ec',
    algorithm: 'sha256',
    notBeforeDate,
    notAfterDate,
    extensions: [
      { name: 'extKeyUsage', serverAuth: true },
      { name: 'subjectAltName', altNames: [{ type: 2, value: 'localhost' }, { type: 7, ip: '127.0.0.1' }, { type: 7, ip: '::1' }] },
    ],
  });
}

function assertPairMatches(cert: string, key: string): void {
  assert.ok(new X509Certificate(cert).checkPrivateKey(createPrivateKey(key)), 'the key belongs to the certificate');
}

test('creates a self-signed certificate for localhost, 127.0.0.1 and ::1 in a new directory', async () => {
  const dir = freshDir();
  const { cert, key, created } = await loadOrCreateDevCertificate(dir);
  assert.is(created, true);

  const certificate = new X509Certificate(cert);
  const names = certificate.subjectAltName ?? '';
  assert.match(names, 'DNS:localhost');
  assert.match(names, 'IP Address:127.0.0.1');
  assert.match(names, /IP Address:(0:0:0:0:0:0:0:1|::1)/);
  assert.ok(certificate.keyUsage?.includes('1.3.6.1.5.5.7.3.1'), 'serverAuth extended key usage');
  assert.is(certificate.issuer, certificate.subject, 'self-signed');
  const lifetime = Date.parse(certificate.validTo) - Date.parse(certificate.validFrom);
  assert.ok(lifetime > 364 * DAY_MS && lifetime < 367 * DAY_MS, `valid about a year, got ${lifetime / DAY_MS} days`);
  assertPairMatches(cert, key);

  assert.is(await readFile(join(dir, 'dev-cert.pem'), 'utf8'), cert);
  assert.is(await readFile(join(dir, 'dev-key.pem'), 'utf8'), key);
  if (process.platform !== 'win32') {
    assert.is((await stat(join(dir, 'dev-key.pem'))).mode & 0o777, 0o600, 'key readable by its owner only');
    assert.is((await stat(dir)).mode & 0o077, 0, 'directory closed to group and others');
  }
});

test('reuses the cached certificate on the next call', async () => {
  const dir = freshDir();
  const first = await loadOrCreateDevCertificate(dir);
  const second = await loadOrCreateDevCertificate(dir);
  assert.is(second.created, false);
  assert.is(second.cert, first.cert);
  assert.is(second.key, first.key);
});

test('a cached key open to group or others is made 0600 and keyMode says so; a key already 0600 is left alone, with no keyMode', async () => {
  for (const open of [0o644, 0o640, 0o604]) {
    const dir = freshDir();
    const first = await loadOrCreateDevCertificate(dir);
    const keyPath = join(dir, 'dev-key.pem');
    assert.is((await stat(keyPath)).mode & 0o777, 0o600, 'made 0600');
    assert.is(first.keyMode, undefined, 'nothing to say of a key made here');
    await chmod(keyPath, open);
    const reused = await loadOrCreateDevCertificate(dir);
    assert.is(reused.created, false, 'the cached pair still serves');
    assert.is(reused.key, first.key);
    assert.equal(reused.keyMode, { path: keyPath, mode: open, tightened: true });
    assert.is((await stat(keyPath)).mode & 0o777, 0o600, `${open.toString(8)} tightened`);
    assert.is((await loadOrCreateDevCertificate(dir)).keyMode, undefined, 'said once: the next start finds it 0600');
  }
});

test('regenerates when the cached certificate is garbage', async () => {
  const dir = freshDir();
  const first = await loadOrCreateDevCertificate(dir);
  await writeFile(join(dir, 'dev-cert.pem'), 'not a certificate');
  const second = await loadOrCreateDevCertificate(dir);
  assert.is(second.created, true);
  assert.is(second.replaced, 'its certificate does not parse');
  assert.is.not(second.cert, first.cert);
  assertPairMatches(second.cert, second.key);
  assert.is(await readFile(join(dir, 'dev-cert.pem'), 'utf8'), second.cert);
});

test('a cached certificate whose key is missing or cannot be read is replaced saying so, not as if none were cached', async () => {
  const dir = freshDir();
  const first = await loadOrCreateDevCertificate(dir);
  await rm(join(dir, 'dev-key.pem'));
  const again = await loadOrCreateDevCertificate(dir);
  assert.is(again.created, true);
  assert.is(again.replaced, 'its key is missing');
  assert.is.not(again.cert, first.cert);
  assertPairMatches(again.cert, again.key);
  // A directory where the key was: EISDIR, as a key another user's process left unreadable (EACCES) would be, root excepted.
  await rm(join(dir, 'dev-key.pem'));
  await mkdir(join(dir, 'dev-key.pem'));
  const unreadable = await loadOrCreateDevCertificate(dir);
  assert.match(unreadable.replaced ?? '', /^its key cannot be read \(EISDIR: /);
});

test('regenerates when the cached key does not belong to the certificate', async () => {
  const dirA = freshDir();
  const dirB = freshDir();
  const a = await loadOrCreateDevCertificate(dirA);
  await loadOrCreateDevCertificate(dirB);
  await writeFile(join(dirB, 'dev-key.pem'), a.key);
  const again = await loadOrCreateDevCertificate(dirB);
  assert.is(again.created, true);
  assert.is(again.replaced, 'its key does not belong to its certificate');
  assertPairMatches(again.cert, again.key);
});

test('regenerates a cached certificate that expires within a day', async () => {
  const dir = freshDir();
  const expiring = await generate([{ name: 'commonName', value: 'localhost' }], {
    keyType: 'ec',
    algorithm: 'sha256',
    notBeforeDate: new Date(Date.now() - DAY_MS),
    notAfterDate: new Date(Date.now() + 60 * 60 * 1000),
    extensions: [
      { name: 'extKeyUsage', serverAuth: true },
      { name: 'subjectAltName', altNames: [{ type: 2, value: 'localhost' }, { type: 7, ip: '127.0.0.1' }, { type: 7, ip: '::1' }] },
    ],
  });
  await mkdir(dir, { recursive: true });
  await writeFile(join(dir, 'dev-cert.pem'), expiring.cert);
  await writeFile(join(dir, 'dev-key.pem'), expiring.private);
  const result = await loadOrCreateDevCertificate(dir);
  assert.is(result.created, true);
  assert.is(result.replaced, `it expires within a day (notAfter ${new Date(new X509Certificate(expiring.cert).validTo).toISOString()})`);
  assert.ok(Date.parse(new X509Certificate(result.cert).validTo) > Date.now() + 300 * DAY_MS);
});

test('regenerates a cached certificate that has expired, rather than serving it', async () => {
  const dir = freshDir();
  const expired = await certificateValid(new Date(Date.now() - 30 * DAY_MS), new Date(Date.now() - DAY_MS));
  await mkdir(dir, { recursive: true });
  await writeFile(join(dir, 'dev-cert.pem'), expired.cert);
  await writeFile(join(dir, 'dev-key.pem'), expired.private);
  const result = await loadOrCreateDevCertificate(dir);
  assert.is(result.created, true);
  assert.is(result.replaced, `it has expired (notAfter ${new Date(new X509Certificate(expired.cert).validTo).toISOString()})`);
  assert.ok(Date.parse(new X509Certificate(result.cert).validTo) > Date.now() + 300 * DAY_MS);
  assert.is(await readFile(join(dir, 'dev-cert.pem'), 'utf8'), result.cert, 'the cache holds the new one');
});

test('regenerates a cached certificate that does not cover ::1', async () => {
  const dir = freshDir();
  const narrow = await generate([{ name: 'commonName', value: 'localhost' }], {
    keyType: 'ec',
    algorithm: 'sha256',
    extensions: [
      { name: 'extKeyUsage', serverAuth: true },
      { name: 'subjectAltName', altNames: [{ type: 2, value: 'localhost' }, { type: 7, ip: '127.0.0.1' }] },
    ],
  });
  await mkdir(dir, { recursive: true });
  await writeFile(join(dir, 'dev-cert.pem'), narrow.cert);
  await writeFile(join(dir, 'dev-key.pem'), narrow.private);
  const result = await loadOrCreateDevCertificate(dir);
  assert.is(result.created, true);
  assert.is(result.replaced, 'it does not cover localhost, 127.0.0.1 and ::1');
});

test('concurrent first calls each get a matching pair and leave whole files behind', async () => {
  const dir = freshDir();
  const results = await Promise.all([1, 2, 3, 4].map(() => loadOrCreateDevCertificate(dir)));
  for (const { cert, key } of results) assertPairMatches(cert, key);
  new X509Certificate(await readFile(join(dir, 'dev-cert.pem'), 'utf8'));
  createPrivateKey(await readFile(join(dir, 'dev-key.pem'), 'utf8'));
});

test('concurrent first calls all serve the one certificate they leave cached, its key beside it', async () => {
  for (let round = 0; round < 5; round++) {
    const dir = freshDir();
    const results = await Promise.all([1, 2, 3, 4].map(() => loadOrCreateDevCertificate(dir)));
    const cert = await readFile(join(dir, 'dev-cert.pem'), 'utf8');
    const key = await readFile(join(dir, 'dev-key.pem'), 'utf8');
    assertPairMatches(cert, key);
    assert.equal(results.map((result) => result.cert === cert && result.key === key), [true, true, true, true]);
    assert.is(results.filter((result) => result.created).length, 1, 'made once');
  }
});

test('a lock left by a process that died is taken over', async () => {
  const dir = freshDir();
  await mkdir(dir, { recursive: true });
  const lockFile = join(dir, 'dev-cert.lock');
  await writeFile(lockFile, '99999\n');
  const old = new Date(Date.now() - 60_000);
  await utimes(lockFile, old, old);
  const { cert, key, created } = await loadOrCreateDevCertificate(dir);
  assert.is(created, true);
  assertPairMatches(cert, key);
  await stat(lockFile).then(() => assert.unreachable('the lock is released'), () => {});
});

test('concurrent first calls meeting a lock left by a process that died all serve the one certificate made', async () => {
  for (let round = 0; round < 15; round++) {
    const dir = freshDir();
    await mkdir(dir, { recursive: true });
    await writeFile(join(dir, 'dev-cert.lock'), JSON.stringify({ pid: 2 ** 22 + 1, hostname: hostname(), pidns: PID_NAMESPACE, time: new Date().toISOString(), id: 'dead' }));
    const results = await Promise.all([1, 2, 3, 4].map(() => loadOrCreateDevCertificate(dir)));
    assert.is(results.filter((result) => result.created).length, 1, `round ${round}: made once`);
    assert.is(new Set(results.map((result) => result.cert)).size, 1, `round ${round}: one certificate`);
  }
});

test('a development certificate made where none was cached says nothing was replaced', async () => {
  const made = await loadOrCreateDevCertificate(freshDir());
  assert.is(made.created, true);
  assert.not.ok('replaced' in made, `replaced: ${JSON.stringify(made.replaced)}`);
});

test('the development certificate is named for localhost and http-kernel, an EC P-256 key, no CA, for signatures only', async () => {
  const { cert, key } = await loadOrCreateDevCertificate(freshDir());
  const certificate = new X509Certificate(cert);
  assert.match(certificate.subject, /^CN=localhost$/m);
  assert.match(certificate.subject, /^O=http-kernel development certificate$/m);
  assert.is(certificate.ca, false);
  const details = createPrivateKey(key).asymmetricKeyDetails;
  assert.is(details?.namedCurve, 'prime256v1');
  const text = execFileSync('openssl', ['x509', '-noout', '-text'], { input: cert, encoding: 'utf8', timeout: 10_000 });
  assert.match(text, /Signature Algorithm: ecdsa-with-SHA256/);
  assert.match(text, /X509v3 Basic Constraints: critical\s+CA:FALSE/);
  assert.match(text, /X509v3 Key Usage: critical\s+Digital Signature\s*\n/);
});

for (const [problem, make] of [
  ['its certificate is missing', async (dir: string) => rm(join(dir, 'dev-cert.pem'))],
  ['its key does not parse', async (dir: string) => writeFile(join(dir, 'dev-key.pem'), 'not a key\n')],
  ['it is not for server authentication', async (dir: string) => {
    const pems = await generate([{ name: 'commonName', value: 'localhost' }], {
      keyType: 'ec',
      notBeforeDate: new Date(Date.now() - DAY_MS),
      notAfterDate: new Date(Date.now() + 30 * DAY_MS),
      extensions: [{ name: 'subjectAltName', altNames: [{ type: 2, value: 'localhost' }, { type: 7, ip: '127.0.0.1' }, { type: 7, ip: '::1' }] }],
    });
    await writeFile(join(dir, 'dev-cert.pem'), pems.cert);
    await writeFile(join(dir, 'dev-key.pem'), pems.private);
  }],
  ['it does not cover localhost, 127.0.0.1 and ::1', async (dir: string) => {
    // Without a DNS name, and with another common name: checkHost() would read a subject of localhost.
    const pems = await generate([{ name: 'commonName', value: 'example.test' }], {
      keyType: 'ec',
      notBeforeDate: new Date(Date.now() - DAY_MS),
      notAfterDate: new Date(Date.now() + 30 * DAY_MS),
      extensions: [{ name: 'extKeyUsage', serverAuth: true }, { name: 'subjectAltName', altNames: [{ type: 7, ip: '127.0.0.1' }, { type: 7, ip: '::1' }] }],
    });
    await writeFile(join(dir, 'dev-cert.pem'), pems.cert);
    await writeFile(join(dir, 'dev-key.pem'), pems.private);
  }],
  ['it is not yet valid', async (dir: string) => {
    const pems = await certificateValid(new Date(Date.now() + DAY_MS), new Date(Date.now() + 30 * DAY_MS));
    await writeFile(join(dir, 'dev-cert.pem'), pems.cert);
    await writeFile(join(dir, 'dev-key.pem'), pems.private);
  }],
] as const) {
  test(`a cached development certificate is replaced when ${problem}, saying so`, async () => {
    const dir = freshDir();
    await loadOrCreateDevCertificate(dir);
    await make(dir);
    const again = await loadOrCreateDevCertificate(dir);
    assert.is(again.created, true);
    assert.ok(again.replaced?.startsWith(problem), `replaced: ${JSON.stringify(again.replaced)}`);
    assertPairMatches(again.cert, again.key);
  });
}

test('octal() writes a mode as chmod takes it', () => {
  assert.is(octal(0o644), '0644');
  assert.is(octal(0o600), '0600');
  assert.is(octal(0o7), '0007');
});

test('a certificate is valid from its notBefore through its notAfter, both included', async () => {
  const dir = freshDir();
  await mkdir(dir, { recursive: true });
  const notBefore = Math.floor((Date.now() - DAY_MS) / 1000) * 1000;
  const notAfter = Math.floor((Date.now() + DAY_MS) / 1000) * 1000;
  const pems = await certificateValid(new Date(notBefore), new Date(notAfter));
  await writeFile(join(dir, 'cert.pem'), pems.cert);
  await writeFile(join(dir, 'key.pem'), pems.private);
  for (const now of [notBefore, notAfter]) {
    assert.equal(await loadCertificateFiles(join(dir, 'cert.pem'), join(dir, 'key.pem'), now), { cert: pems.cert, key: pems.private });
  }
});

test('loadCertificateFiles names the file and what it is, with the reason and its cause', async () => {
  const dir = freshDir();
  await loadOrCreateDevCertificate(dir);
  const cert = join(dir, 'dev-cert.pem');
  const key = join(dir, 'dev-key.pem');
  const failure = async (certPath: string, keyPath: string): Promise<TlsCertificateError> => {
    try {
      await loadCertificateFiles(certPath, keyPath);
    } catch (error) {
      assert.instance(error, TlsCertificateError);
      assert.is((error as Error).name, 'TlsCertificateError');
      assert.ok((error as Error).cause instanceof Error, 'the error it comes from is its cause');
      return error as TlsCertificateError;
    }
    throw new Error('expected a TlsCertificateError');
  };
  assert.match((await failure(join(dir, 'none.pem'), key)).message, /^cannot read TLS certificate \S+none\.pem: ENOENT/);
  assert.match((await failure(cert, join(dir, 'none.pem'))).message, /^cannot read TLS key \S+none\.pem: ENOENT/);
  await writeFile(join(dir, 'garbage.pem'), 'not PEM at all\n');
  assert.match((await failure(join(dir, 'garbage.pem'), key)).message, /^TLS certificate \S+garbage\.pem is not a PEM certificate: \S/);
  // Not encrypted, only not a key: said so, with OpenSSL's reason.
  assert.match((await failure(cert, join(dir, 'garbage.pem'))).message, /^TLS key \S+garbage\.pem is not an unencrypted PEM private key: \S/);
});

test('loadCertificateFiles reads a certificate and its key', async () => {
  const dir = freshDir();
  const { cert, key } = await loadOrCreateDevCertificate(dir);
  const loaded = await loadCertificateFiles(join(dir, 'dev-cert.pem'), join(dir, 'dev-key.pem'));
  assert.equal(loaded, { cert, key });
});

test('loadCertificateFiles takes an expired certificate and says so in validity, with its notAfter', async () => {
  const dir = freshDir();
  await mkdir(dir, { recursive: true });
  const notAfter = new Date(Math.floor((Date.now() - DAY_MS) / 1000) * 1000);
  const expired = await certificateValid(new Date(Date.now() - 30 * DAY_MS), notAfter);
  await writeFile(join(dir, 'expired-cert.pem'), expired.cert);
  await writeFile(join(dir, 'expired-key.pem'), expired.private);
  const loaded = await loadCertificateFiles(join(dir, 'expired-cert.pem'), join(dir, 'expired-key.pem'));
  assert.equal(loaded, { cert: expired.cert, key: expired.private, validity: { problem: 'expired', date: notAfter } });
});

test('loadCertificateFiles takes a certificate not yet valid and says so in validity, with its notBefore', async () => {
  const dir = freshDir();
  await mkdir(dir, { recursive: true });
  const notBefore = new Date(Math.floor((Date.now() + DAY_MS) / 1000) * 1000);
  const early = await certificateValid(notBefore, new Date(Date.now() + 30 * DAY_MS));
  await writeFile(join(dir, 'early-cert.pem'), early.cert);
  await writeFile(join(dir, 'early-key.pem'), early.private);
  const loaded = await loadCertificateFiles(join(dir, 'early-cert.pem'), join(dir, 'early-key.pem'));
  assert.equal(loaded.validity, { problem: 'not yet valid', date: notBefore });
});

test('loadCertificateFiles names the file it cannot read', async () => {
  const missing = join(root, 'missing-cert.pem');
  try {
    await loadCertificateFiles(missing, join(root, 'missing-key.pem'));
    assert.unreachable('expected a TlsCertificateError');
  } catch (error) {
    assert.instance(error, TlsCertificateError);
    assert.is((error as TlsCertificateError).code, 'HK_TLS_CERTIFICATE');
    assert.match((error as Error).message, 'missing-');
    assert.match((error as Error).message, 'ENOENT');
  }
});

test('loadCertificateFiles rejects a key that belongs to another certificate', async () => {
  const dirA = freshDir();
  const dirB = freshDir();
  await loadOrCreateDevCertificate(dirA);
  await loadOrCreateDevCertificate(dirB);
  try {
    await loadCertificateFiles(join(dirA, 'dev-cert.pem'), join(dirB, 'dev-key.pem'));
    assert.unreachable('expected a TlsCertificateError');
  } catch (error) {
    assert.instance(error, TlsCertificateError);
    assert.match((error as Error).message, 'does not belong');
  }
});

test('loadCertificateFiles rejects a file that is not a certificate', async () => {
  const dir = freshDir();
  await loadOrCreateDevCertificate(dir);
  const bogus = join(dir, 'bogus.pem');
  await writeFile(bogus, 'hello');
  try {
    await loadCertificateFiles(bogus, join(dir, 'dev-key.pem'));
    assert.unreachable('expected a TlsCertificateError');
  } catch (error) {
    assert.instance(error, TlsCertificateError);
    assert.match((error as Error).message, 'is not a PEM certificate');
  }
});

test('loadCertificateFiles says a key is encrypted, and how to write it without its passphrase, rather than an OpenSSL code', async () => {
  const dir = freshDir();
  const { key } = await loadOrCreateDevCertificate(dir);
  const plain = createPrivateKey(key);
  // PKCS#8 (`BEGIN ENCRYPTED PRIVATE KEY`) and the traditional form (`Proc-Type: 4,ENCRYPTED`), as openssl writes them.
  const encrypted = {
    pkcs8: plain.export({ format: 'pem', type: 'pkcs8', cipher: 'aes-256-cbc', passphrase: 'secret' }) as string,
    sec1: plain.export({ format: 'pem', type: 'sec1', cipher: 'aes-256-cbc', passphrase: 'secret' }) as string,
  };
  for (const [form, pem] of Object.entries(encrypted)) {
    const keyPath = join(dir, `${form}-encrypted-key.pem`);
    await writeFile(keyPath, pem);
    try {
      await loadCertificateFiles(join(dir, 'dev-cert.pem'), keyPath);
      assert.unreachable('expected a TlsCertificateError');
    } catch (error) {
      assert.instance(error, TlsCertificateError);
      assert.is((error as Error).message, `TLS key ${keyPath} is encrypted with a passphrase, which is not supported: write it unencrypted (openssl pkey -in ${keyPath} -out <file>), readable by the server alone`, form);
      assert.ok((error as Error).cause instanceof Error, `${form}: OpenSSL's error is its cause`);
    }
  }
});

test('the openssl command suggested for an encrypted key quotes a path with spaces or quotes for a POSIX shell', async () => {
  const base = freshDir();
  const { key } = await loadOrCreateDevCertificate(base);
  const pem = createPrivateKey(key).export({ format: 'pem', type: 'pkcs8', cipher: 'aes-256-cbc', passphrase: 'secret' }) as string;
  const dir = join(base, "Bob's keys");
  await mkdir(dir);
  const keyPath = join(dir, 'my key.pem');
  await writeFile(keyPath, pem);
  try {
    await loadCertificateFiles(join(base, 'dev-cert.pem'), keyPath);
    assert.unreachable('expected a TlsCertificateError');
  } catch (error) {
    assert.instance(error, TlsCertificateError);
    const quoted = `'${keyPath.replace("'", "'\\''")}'`;
    assert.ok((error as Error).message.includes(`(openssl pkey -in ${quoted} -out <file>)`), (error as Error).message);
    // What a shell makes of it: the path, whole.
    assert.is(execFileSync('sh', ['-c', `printf %s ${quoted}`], { encoding: 'utf8' }), keyPath);
  }
});

test('the development certificate and key end with a newline, so a file appended to them still parses', async () => {
  const dir = freshDir();
  const { cert, key } = await loadOrCreateDevCertificate(dir);
  assert.ok(cert.endsWith('\n'), 'certificate');
  assert.ok(key.endsWith('\n'), 'key');
  const onDisk = await readFile(join(dir, 'dev-cert.pem'), 'utf8');
  assert.ok(onDisk.endsWith('\n'), 'cached certificate');
  const bundle = onDisk + onDisk;
  assert.is(bundle.match(/^-----BEGIN CERTIFICATE-----$/gm)?.length, 2, 'two blocks, each on its own line');
  assert.is(bundle.match(/^-----END CERTIFICATE-----$/gm)?.length, 2);
});

test('loadCertificateFiles names the files when OpenSSL refuses the pair (a 512-bit RSA key)', async () => {
  const dir = freshDir();
  await mkdir(dir, { recursive: true });
  const pems = await generate([{ name: 'commonName', value: 'localhost' }], { keyType: 'rsa', keySize: 512, algorithm: 'sha256' });
  await writeFile(join(dir, 'weak-cert.pem'), pems.cert);
  await writeFile(join(dir, 'weak-key.pem'), pems.private);
  try {
    await loadCertificateFiles(join(dir, 'weak-cert.pem'), join(dir, 'weak-key.pem'));
    assert.unreachable('expected a TlsCertificateError');
  } catch (error) {
    assert.instance(error, TlsCertificateError);
    assert.match((error as Error).message, 'weak-cert.pem');
    assert.match((error as Error).message, 'too small');
    assert.ok((error as Error).cause instanceof Error, "OpenSSL's error is its cause");
  }
});

test('a directory where the certificate cannot be cached costs the cache, not https: the certificate made serves, and notCached says why', async () => {
  const base = await mkdtemp(join(tmpdir(), 'http-kernel-tls-'));
  try {
    // A file where the directory would be: neither it nor anything under it can be made.
    await writeFile(join(base, 'tls'), 'not a directory');
    const made = await loadOrCreateDevCertificate(join(base, 'tls'));
    assert.ok(made.created);
    assert.instance(made.notCached, TlsCertificateError);
    assert.match(made.notCached!.message, /^cannot cache the development certificate in .*tls: /);
    const cause = made.notCached!.cause;
    assert.ok(cause instanceof Error, "the file system's error is its cause");
    assert.ok(made.notCached!.message.endsWith(`: ${cause.message}`), 'and its message the reason');
    assert.ok(new X509Certificate(made.cert).checkPrivateKey(createPrivateKey(made.key)), 'a usable pair');
  } finally {
    await rm(base, { recursive: true, force: true });
  }
});

test.run();
