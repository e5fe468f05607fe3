import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { REDACTED, Redactor } from '../../../lib/profiler/redactor.js';

const test = suite('Redactor keys');
const redactor = new Redactor();

/** Keys whose values the default rules hide. */
const SECRET = [
  // Secret words, as words of the key or at the end of one (csrfmiddlewaretoken, PHPSESSID), in any case.
  'password', 'Password', 'PASSWORD', 'user[password]', 'newPassword', 'passwd', 'passphrase', 'pass_phrase',
  'secret', 'client_secret', 'clientSecret', 'token', '_token', 'refresh_token', 'accessToken', 'X-Auth-Token', 'csrf_token', 'x-xsrf-token', 'XSRF-TOKEN', 'csrfmiddlewaretoken',
  'apikey', 'api_key', 'api-key', 'apiKey', 'X-Api-Key', 'API_KEY', 'credential', 'credentials', 'X-Amz-Credential', 'private_key', 'privateKey', 'signature', 'X-Amz-Signature',
  'sessid', 'sessionid', 'session_id', 'sessionId', 'PHPSESSID', 'JSESSIONID', 'ASP.NET_SessionId', 'Authorization', 'authorization', 'proxy-authorization',
  // Short words, as whole words of the key (separated by non-letters or a camelCase step).
  'pass', 'db_pass', 'PASS', 'pwd', 'userPwd', 'DB_PWD', 'auth', 'x-auth', 'authToken', 'basic_auth', 'AUTH_TOKEN', 'auth2',
  'otp', 'OTP', 'otp_code', 'userOtp', 'pin', 'PIN', 'userPin', 'API_PIN', 'pin_code', 'card.pin',
  // Session cookies.
  'sid', 'connect.sid', 'session', 'laravel_session', 'rack.session', '__Host-session', 'userSession',
];

/** Keys that merely contain a secret-looking word: their values are kept. */
const HARMLESS = [
  'author', 'Author', 'AUTHOR', 'authority', 'oauthor', 'co_author', 'authored_at', 'authenticated',
  'footprint', 'otpx', 'spin', 'pinned', 'pinyin', 'PINCODE', 'side', 'inside', 'sidebar', 'residence',
  'passenger', 'compass', 'passport', 'bypass', 'passive', 'Passage', 'surpass',
  'sessions_count', 'possession', 'session_count', 'lang', 'q', 'user', 'keyboard', 'apiVersion',
];

test('keys with a secret word anywhere, or a short secret word as a whole word, look secret', () => {
  for (const key of SECRET) assert.ok(redactor.isSecretKey(key), key);
});

test('keys that merely contain a short secret word inside a longer word do not look secret', () => {
  for (const key of HARMLESS) assert.not.ok(redactor.isSecretKey(key), key);
});

test('harmless keys keep their values in log context, queries, URLs and bodies; secret ones next to them do not', () => {
  const context = { author: 'ann', footprint: 3, spin: 'left', passenger: 'bob', compass: 'N', db_pass: 'hunter2', userPin: '1234' };
  assert.equal(redactor.value(context), { ...context, db_pass: REDACTED, userPin: REDACTED });
  assert.is(redactor.valueJson(context), JSON.stringify(redactor.value(context)));
  assert.equal(redactor.searchParams(new URLSearchParams('author=ann&passport=X1&otp=123456')), { author: 'ann', passport: 'X1', otp: REDACTED });
  assert.is(redactor.url('http://h/s?authority=a&bypass=1&pin=0000'), `http://h/s?authority=a&bypass=1&pin=${encodeURIComponent(REDACTED)}`);
  assert.is(redactor.body('author=ann&x-auth=t', 'application/x-www-form-urlencoded'), `author=ann&x-auth=${encodeURIComponent(REDACTED)}`);
  assert.is(redactor.text('footprint=12 sid=abc'), `footprint=12 sid=${REDACTED}`);
});

test('token, secret, password, auth, session id and the like are words of a key: max_tokens, tokenizer and session_idle_timeout are shown', () => {
  const shown = ['max_tokens', 'maxTokens', 'MAX_TOKENS', 'max_completion_tokens', 'prompt_tokens', 'token_count', 'tokenizer', 'tokenize', 'session_idle_timeout', 'sessionIdleTimeout', 'session_identity', 'secretary', 'detokenized'];
  for (const key of shown) assert.not.ok(redactor.isSecretKey(key), key);
  const hidden = ['access_token', 'refresh_token', 'X-Auth-Token', 'id_token', 'tokens', 'api_tokens', 'client_secret', 'PHPSESSID', 'ASPSESSIONIDQQGGQQGG', 'sid', 'session_id', 'sessionid', 'jwt', 'bearer', 'XSRFToken', 'max_age_token'];
  for (const key of hidden) assert.ok(redactor.isSecretKey(key), key);
  assert.equal(redactor.value({ max_tokens: 256, tokenizer: 'cl100k', session_idle_timeout: 900, access_token: 'at' }), { max_tokens: 256, tokenizer: 'cl100k', session_idle_timeout: 900, access_token: REDACTED });
  assert.equal(redactor.searchParams(new URLSearchParams('max_tokens=256&token=t')), { max_tokens: '256', token: REDACTED });
});

test('a key run together from a secret word and another (secretkey, privatekey, passwordconfirm) looks secret, as it did before keys were split into words', () => {
  const hidden = ['secretkey', 'SECRETKEY', 'secretaccesskey', 'privatekey', 'PRIVATEKEY', 'userprivatekey', 'passwordconfirm', 'passwordhash', 'passphrasehint'];
  for (const key of hidden) assert.ok(redactor.isSecretKey(key), key);
  assert.equal(redactor.searchParams(new URLSearchParams('secretkey=s&privatekey=p')), { secretkey: REDACTED, privatekey: REDACTED });
});

test('header names are judged as sent, lower-cased: X-Author is shown, X-Auth and X-PIN are hidden', () => {
  assert.equal(redactor.headers({ 'X-Author': 'ann', 'X-Auth': 't', 'X-PIN': '1', 'X-Api-Key': 'k' }), { 'x-author': 'ann', 'x-auth': REDACTED, 'x-pin': REDACTED, 'x-api-key': REDACTED });
});


test('digits end a word before letters too: a secret word after digits (user2pin, db2pass) looks secret', () => {
  for (const key of ['user2pin', 'db2pass', 'step2otp', 'USER2PIN']) assert.ok(redactor.isSecretKey(key), key);
  assert.equal(redactor.searchParams(new URLSearchParams('user2pin=1234&v2=ok')), { user2pin: REDACTED, v2: 'ok' });
});

test('csrf and xsrf alone are secret words (Express\'s _csrf form field), not only before token', () => {
  for (const key of ['csrf', '_csrf', 'CSRF', 'xsrf', 'x-xsrf']) assert.ok(redactor.isSecretKey(key), key);
  assert.is(redactor.body('_csrf=Zx9&q=books', 'application/x-www-form-urlencoded'), `_csrf=${encodeURIComponent(REDACTED)}&q=books`);
});

test('a key that ends with a separator is judged by its last word: user[session] and session[] are session values', () => {
  for (const key of ['user[session]', 'session[]', 'laravel_session.']) assert.ok(redactor.isSecretKey(key), key);
  assert.not.ok(redactor.isSecretKey('session[count]'));
});

test('only token and tokens are numbers next to a count word: a password, PIN or OTP next to one is still hidden', () => {
  for (const key of ['max_pin', 'used_otp', 'prompt_password', 'remaining_secret', 'pin_count']) assert.ok(redactor.isSecretKey(key), key);
  assert.equal(redactor.value({ used_otp: '123456', max_tokens: 5 }), { used_otp: REDACTED, max_tokens: 5 });
});

test.run();
