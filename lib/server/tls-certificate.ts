import { X509Certificate, createPrivateKey, randomBytes } from 'node:crypto';
import { chmod, readFile, rename, stat, unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createSecureContext } from 'node:tls';
import { PRIVATE_DIRECTORY, makeDirectory } from '../fs/make-directory.js';
import { FileLock } from '../fs/file-lock.js';

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
const LOCK_FILE = 'dev-cert.lock';
/** A lock not refreshed for this long was left by a process that died (its holder refreshes it every quarter of this). */
const LOCK_STALE_MS = 10_000;
/** How long a start waits for another process making the certificate before it makes one for its own run. */
const LOCK_WAIT_MS = 15_000;
const VALIDITY_DAYS = 365;
const DAY_MS = 24 * 60 * 60 * 1000;
/** A cached certificate closer than this to expiry is replaced, so a server never starts with one about to lapse. */
const RENEW_BEFORE_MS = DAY_MS;
const SERVER_AUTH_OID = '1.3.6.1.5.5.7.3.1';
/** A passphrase-protected PEM key: PKCS#8's label (RFC 5958), or the traditional form's header (RFC 1421). */
const ENCRYPTED_PEM_KEY = /^-----BEGIN ENCRYPTED PRIVATE KEY-----|^Proc-Type: 4,ENCRYPTED/m;

/** A development certificate, and whether it was made now; `notCached` says why one made now is not kept (it serves this run only). */
export interface DevCertificate extends TlsCredentials {
  created: boolean;
  /** Why the cached one was replaced by the one made now (`it has expired (notAfter <date>)`, `its key is missing`); unset when none was cached. */
  replaced?: string;
  notCached?: TlsCertificateError;
  /** Set when the cached key was open to group or others (`mode`, as found): now 0600, or why it could not be made so (it serves all the same). */
  keyMode?: KeyModeChange;
}

/** What became of a cached development key that group or others could read: tightened to 0600, or kept as it is and why. */
export type KeyModeChange = { path: string; mode: number; tightened: true } | { path: string; mode: number; tightened: false; reason: string };

/**
 * The self-signed certificate for local https: reused from `dir` while it is valid for more than a day,
 * covers localhost, 127.0.0.1 and ::1, and matches its key; generated and cached (key mode 0600) otherwise.
 * A directory that cannot be made or written costs the cache, not https: the certificate made then
 * serves this run, and `notCached` says why it was not kept.
 */
export async function loadOrCreateDevCertificate(dir = 'var/tls'): Promise<DevCertificate> {
  const certPath = join(dir, CERT_FILE);
  const keyPath = join(dir, KEY_FILE);

  const cached = await readCachedPair(certPath, keyPath);
  const problem = cached === null ? undefined : typeof cached === 'string' ? cached : devCertificateProblem(cached, Date.now());
  if (cached !== null && typeof cached !== 'string' && problem === null) return { ...cached, created: false, ...(await tightenKeyMode(keyPath)) };
  // Said when a certificate is made in its place: an operator learns why the browser's exception for it no longer holds.
  const replaced = problem === null || problem === undefined ? {} : { replaced: problem };

  let release: () => Promise<void>;
  try {
    await makeDirectory(dir, PRIVATE_DIRECTORY);
    // One process makes the certificate, the others starting at the same time wait for it and serve
    // the same one: each making its own, all but one served a certificate not in the cache, and the
    // cache could be left with the key of one beside the certificate of another.
    release = await lock(join(dir, LOCK_FILE));
  } catch (error) {
    return { ...(await generateDevCertificate()), created: true, ...replaced, notCached: notCached(dir, error) };
  }
  try {
    const madeMeanwhile = await readCachedPair(certPath, keyPath);
    if (madeMeanwhile !== null && typeof madeMeanwhile !== 'string' && devCertificateProblem(madeMeanwhile, Date.now()) === null) return { ...madeMeanwhile, created: false, ...(await tightenKeyMode(keyPath)) };
    const fresh = await generateDevCertificate();
    try {
      // Key first: a process reading between the two renames sees a key that does not match the old
      // certificate, rejects the pair and waits for the lock, rather than serving a mismatched pair.
      await writeFileAtomically(keyPath, fresh.key, 0o600);
      await writeFileAtomically(certPath, fresh.cert, 0o644);
    } catch (error) {
      return { ...fresh, created: true, ...replaced, notCached: notCached(dir, error) };
    }
    return { ...fresh, created: true, ...replaced };
  } finally {
    await release();
  }
}

/**
 * A cached key made by hand, copied in, or left by an older umask may be open to group or others:
 * it is made 0600, as a key made here is. Where modes cannot be changed (a file system without
 * them, a key another user owns) it still serves, and `keyMode` says why it was kept as it is.
 */
async function tightenKeyMode(keyPath: string): Promise<{ keyMode?: KeyModeChange }> {
  // Windows keeps no such modes: stat reports 0o666 for any writable file.
  if (process.platform === 'win32') return {};
  let mode: number;
  try {
    mode = (await stat(keyPath)).mode & 0o777;
  } catch {
    // It was read a moment ago: a key gone since is the next start's concern.
    return {};
  }
  if ((mode & 0o077) === 0) return {};
  try {
    await chmod(keyPath, 0o600);
    // Some file systems (vfat, a mount without permissions) take chmod without keeping it.
    const now = (await stat(keyPath)).mode & 0o777;
    if ((now & 0o077) !== 0) return { keyMode: { path: keyPath, mode, tightened: false, reason: `its file system keeps mode ${octal(now)}` } };
  } catch (error) {
    return { keyMode: { path: keyPath, mode, tightened: false, reason: reason(error) } };
  }
  return { keyMode: { path: keyPath, mode, tightened: true } };
}

/** A file mode as chmod takes it: `0644`. */
export function octal(mode: number): string {
  return `0${mode.toString(8).padStart(3, '0')}`;
}

function notCached(dir: string, error: unknown): TlsCertificateError {
  return new TlsCertificateError(`cannot cache the development certificate in ${dir}: ${reason(error)}`, { cause: error });
}

/**
 * Takes the lock file at `path` (a FileLock: made with O_EXCL, refreshed while held so a slow start
 * keeps it; one left by a process of this host that is gone is taken over at once, any other once
 * not refreshed for LOCK_STALE_MS), waiting for it at most LOCK_WAIT_MS. Resolves to its release.
 */
async function lock(path: string): Promise<() => Promise<void>> {
  const held = new FileLock(path, LOCK_STALE_MS, { holderInfo: true, refreshWhileHeld: true });
  await held.acquire(LOCK_WAIT_MS);
  return () => held.release();
}

/** A certificate and key given by the user; `validity` is set when the certificate is not valid now. */
export interface CertificateFiles extends TlsCredentials {
  validity?: CertificateValidityProblem;
}

/** Why a certificate is not valid at a time: expired (its notAfter, `validTo`, is past) or not yet valid (its notBefore, `validFrom`, is ahead). */
export interface CertificateValidityProblem {
  problem: 'expired' | 'not yet valid';
  /** The date that makes it so: notAfter when expired, notBefore when not yet valid. */
  date: Date;
}

/**
 * Reads a certificate and key given by the user, and checks they parse and belong together. A
 * certificate out of its validity period is returned with `validity` set, not refused: clients will
 * refuse it, but a developer may want to test just that.
 */
export async function loadCertificateFiles(certPath: string, keyPath: string, now = Date.now()): Promise<CertificateFiles> {
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
    // OpenSSL says no more than `interrupted or cancelled` (PKCS#8) or `unsupported` (the traditional form).
    if (ENCRYPTED_PEM_KEY.test(key)) {
      throw new TlsCertificateError(`TLS key ${keyPath} is encrypted with a passphrase, which is not supported: write it unencrypted (openssl pkey -in ${shellQuoted(keyPath)} -out <file>), readable by the server alone`, { cause: error });
    }
    throw new TlsCertificateError(`TLS key ${keyPath} is not an unencrypted PEM private key: ${reason(error)}`, { cause: error });
  }
  if (!certificate.checkPrivateKey(privateKey)) {
    throw new TlsCertificateError(`TLS key ${keyPath} does not belong to the certificate ${certPath}`);
  }
  try {
    // What https.createServer does with them: OpenSSL's own checks (a key below its security level,
    // `ee key too small`; a later block of the chain that does not parse) then name the files here,
    // rather than surfacing from startServers as a bare OpenSSL code with a stack trace.
    createSecureContext({ cert, key });
  } catch (error) {
    throw new TlsCertificateError(`TLS certificate ${certPath} and key ${keyPath} cannot be used: ${reason(error)}`, { cause: error });
  }
  const validity = validityProblem(certificate, now);
  return validity === null ? { cert, key } : { cert, key, validity };
}

/** Whether `certificate` is out of its validity period at `now`, and by which of its dates. */
function validityProblem(certificate: X509Certificate, now: number): CertificateValidityProblem | null {
  const notBefore = Date.parse(certificate.validFrom);
  const notAfter = Date.parse(certificate.validTo);
  if (notAfter < now) return { problem: 'expired', date: new Date(notAfter) };
  if (notBefore > now) return { problem: 'not yet valid', date: new Date(notBefore) };
  return null;
}

async function readTlsFile(path: string, what: string): Promise<string> {
  try {
    return await readFile(path, 'utf8');
  } catch (error) {
    throw new TlsCertificateError(`cannot read TLS ${what} ${path}: ${reason(error)}`, { cause: error });
  }
}

/**
 * The cached pair; null when neither file is there (none was cached); otherwise, when one is missing
 * or cannot be read (a key left by `sudo`, mode 0600), why the pair cannot serve.
 */
async function readCachedPair(certPath: string, keyPath: string): Promise<TlsCredentials | string | null> {
  const [cert, key] = await Promise.allSettled([readFile(certPath, 'utf8'), readFile(keyPath, 'utf8')]);
  if (cert.status === 'fulfilled' && key.status === 'fulfilled') return { cert: cert.value, key: key.value };
  const missing = (read: PromiseSettledResult<string>): boolean => read.status === 'rejected' && (read.reason as { code?: unknown } | null)?.code === 'ENOENT';
  if (missing(cert) && missing(key)) return null;
  const [what, failed] = cert.status === 'rejected' ? ['certificate', cert] : ['key', key as PromiseRejectedResult];
  return missing(failed) ? `its ${what} is missing` : `its ${what} cannot be read (${reason(failed.reason)})`;
}

/** Why a cached pair cannot serve as the development certificate (it is then made anew), or null when it can. */
function devCertificateProblem({ cert, key }: TlsCredentials, now: number): string | null {
  let certificate: X509Certificate;
  try {
    certificate = new X509Certificate(cert);
  } catch {
    return 'its certificate does not parse';
  }
  const notBefore = Date.parse(certificate.validFrom);
  const notAfter = Date.parse(certificate.validTo);
  if (notBefore > now) return `it is not yet valid (notBefore ${new Date(notBefore).toISOString()})`;
  if (notAfter < now) return `it has expired (notAfter ${new Date(notAfter).toISOString()})`;
  if (notAfter - now <= RENEW_BEFORE_MS) return `it expires within a day (notAfter ${new Date(notAfter).toISOString()})`;
  try {
    const covered =
      DEV_CERTIFICATE_NAMES.dns.every((name) => certificate.checkHost(name, { wildcards: false }) === name) &&
      DEV_CERTIFICATE_NAMES.ip.every((ip) => certificate.checkIP(ip) !== undefined);
    if (!covered) return `it does not cover ${[...DEV_CERTIFICATE_NAMES.dns, ...DEV_CERTIFICATE_NAMES.ip].join(', ').replace(/, ([^,]*)$/, ' and $1')}`;
  } catch {
    return 'its names cannot be read';
  }
  if (!(certificate.keyUsage ?? []).includes(SERVER_AUTH_OID)) return 'it is not for server authentication';
  let privateKey;
  try {
    privateKey = createPrivateKey(key);
  } catch {
    return 'its key does not parse';
  }
  try {
    if (certificate.checkPrivateKey(privateKey)) return null;
  } catch {
    // A key of another type than the certificate's (RSA beside EC) is refused by OpenSSL: it does not belong either.
  }
  return 'its key does not belong to its certificate';
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
  // selfsigned ends its PEMs without a newline: a file appended to it (`cat dev-cert.pem other.pem`,
  // a CA bundle the certificate is added to) would glue two blocks together and parse as neither.
  return { key: withFinalNewline(pems.private), cert: withFinalNewline(pems.cert) };
}

function withFinalNewline(pem: string): string {
  return pem.endsWith('\n') ? pem : `${pem}\n`;
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

/** A path as a POSIX shell reads it back whole: as it is when it holds no character the shell treats specially, else in single quotes (a `'` as `'\\''`). */
function shellQuoted(path: string): string {
  return /^[\w@%+=:,./-]+$/.test(path) ? path : `'${path.replaceAll("'", "'\\''")}'`;
}

function reason(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
