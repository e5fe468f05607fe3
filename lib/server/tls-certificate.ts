import { X509Certificate, createPrivateKey, randomBytes } from 'node:crypto';
import { readFile, rename, unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { PRIVATE_DIRECTORY, makeDirectory } from '../fs/make-directory.js';

/** A PEM certificate (chain) and its PEM private key, as node:https takes them. */
export interface TlsCredentials {
  key: string;
  cert: string;
}

/** Thrown when a certificate or key cannot be read or used; the message names the file and the reason. */
export class TlsCertificateError extends Error {
  readonly code = 'HK_TLS_CERTIFICATE';
  override readonly name = 'TlsCertificateError';
}

/** The names the development certificate covers. */
export const DEV_CERTIFICATE_NAMES = Object.freeze({ dns: ['localhost'], ip: ['127.0.0.1', '::1'] });

const CERT_FILE = 'dev-cert.pem';
const KEY_FILE = 'dev-key.pem';
const VALIDITY_DAYS = 365;
const DAY_MS = 24 * 60 * 60 * 1000;
/** A cached certificate closer than this to expiry is replaced, so a server never starts with one about to lapse. */
const RENEW_BEFORE_MS = DAY_MS;
const SERVER_AUTH_OID = '1.3.6.1.5.5.7.3.1';

/**
 * The self-signed certificate for local https: reused from `dir` while it is valid for more than a day,
 * covers localhost, 127.0.0.1 and ::1, and matches its key; generated and cached (key mode 0600) otherwise.
 */
export async function loadOrCreateDevCertificate(dir = 'var/tls'): Promise<TlsCredentials & { created: boolean }> {
  const certPath = join(dir, CERT_FILE);
  const keyPath = join(dir, KEY_FILE);

  const cached = await readCachedPair(certPath, keyPath);
  if (cached !== null && isUsableDevCertificate(cached, Date.now())) return { ...cached, created: false };

  const fresh = await generateDevCertificate();
  try {
    await makeDirectory(dir, PRIVATE_DIRECTORY);
    // Key first: a process reading between the two renames sees a key that does not match the old
    // certificate, rejects the pair and generates its own, rather than serving a mismatched pair.
    await writeFileAtomically(keyPath, fresh.key, 0o600);
    await writeFileAtomically(certPath, fresh.cert, 0o644);
  } catch (error) {
    throw new TlsCertificateError(`cannot cache the development certificate in ${dir}: ${reason(error)}`, { cause: error });
  }
  return { ...fresh, created: true };
}

/** Reads a certificate and key given by the user, and checks they parse and belong together. */
export async function loadCertificateFiles(certPath: string, keyPath: string): Promise<TlsCredentials> {
  const cert = await readTlsFile(certPath, 'certificate');
  const key = await readTlsFile(keyPath, 'key');
  let certificate: X509Certificate;
  try {
    certificate = new X509Certificate(cert);
  } catch (error) {
    throw new TlsCertificateError(`TLS certificate ${certPath} is not a PEM certificate: ${reason(error)}`, { cause: error });
  }
  let privateKey;
  try {
    privateKey = createPrivateKey(key);
  } catch (error) {
    throw new TlsCertificateError(`TLS key ${keyPath} is not an unencrypted PEM private key: ${reason(error)}`, { cause: error });
  }
  if (!certificate.checkPrivateKey(privateKey)) {
    throw new TlsCertificateError(`TLS key ${keyPath} does not belong to the certificate ${certPath}`);
  }
  return { cert, key };
}

async function readTlsFile(path: string, what: string): Promise<string> {
  try {
    return await readFile(path, 'utf8');
  } catch (error) {
    throw new TlsCertificateError(`cannot read TLS ${what} ${path}: ${reason(error)}`, { cause: error });
  }
}

async function readCachedPair(certPath: string, keyPath: string): Promise<TlsCredentials | null> {
  try {
    const [cert, key] = await Promise.all([readFile(certPath, 'utf8'), readFile(keyPath, 'utf8')]);
    return { cert, key };
  } catch {
    return null;
  }
}

function isUsableDevCertificate({ cert, key }: TlsCredentials, now: number): boolean {
  try {
    const certificate = new X509Certificate(cert);
    return (
      Date.parse(certificate.validFrom) <= now &&
      Date.parse(certificate.validTo) - now > RENEW_BEFORE_MS &&
      DEV_CERTIFICATE_NAMES.dns.every((name) => certificate.checkHost(name, { wildcards: false }) === name) &&
      DEV_CERTIFICATE_NAMES.ip.every((ip) => certificate.checkIP(ip) !== undefined) &&
      (certificate.keyUsage ?? []).includes(SERVER_AUTH_OID) &&
      certificate.checkPrivateKey(createPrivateKey(key))
    );
  } catch {
    return false;
  }
}

async function generateDevCertificate(): Promise<TlsCredentials> {
  const notBeforeDate = new Date(Date.now() - 60_000); // tolerate a client clock slightly behind ours
  const notAfterDate = new Date(notBeforeDate.getTime() + VALIDITY_DAYS * DAY_MS);
  // Loaded only when a certificate is made: selfsigned and its ASN.1 stack cost a process 17 MB.
  const { generate } = await import('selfsigned');
  const pems = await generate(
    [
      { name: 'commonName', value: 'localhost' },
      { name: 'organizationName', value: 'http-kernel development certificate' },
    ],
    {
      keyType: 'ec',
      curve: 'P-256',
      algorithm: 'sha256',
      notBeforeDate,
      notAfterDate,
      extensions: [
        { name: 'basicConstraints', cA: false, critical: true },
        { name: 'keyUsage', digitalSignature: true, critical: true },
        { name: 'extKeyUsage', serverAuth: true },
        {
          name: 'subjectAltName',
          altNames: [
            ...DEV_CERTIFICATE_NAMES.dns.map((value) => ({ type: 2 as const, value })),
            ...DEV_CERTIFICATE_NAMES.ip.map((ip) => ({ type: 7 as const, ip })),
          ],
        },
      ],
    },
  );
  return { key: pems.private, cert: pems.cert };
}

/** Temp file in the same directory, then rename: readers see the old file or the new one, never half of one. */
async function writeFileAtomically(path: string, content: string, mode: number): Promise<void> {
  const temp = `${path}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  try {
    await writeFile(temp, content, { mode, flag: 'wx' });
    await rename(temp, path);
  } catch (error) {
    await unlink(temp).catch(() => {});
    throw error;
  }
}

function reason(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
