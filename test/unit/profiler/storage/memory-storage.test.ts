import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { InvalidProfileError, MemoryStorage, ProfileBatchError, ProfileExistsError } from '../../../../lib/profiler/storage/index.js';
import type { Profile } from '../../../../lib/profiler/profile.js';
import { BASE_TIME, checkNonAsciiUrlSearch, makeProfile, rejection, tokenFor } from './fixtures.js';

const test = suite('MemoryStorage');

test('malformed tokens are never claimed nor read', async () => {
  const storage = new MemoryStorage();
  for (const token of ['../../etc', 'ABCDEF', 'abc', 'abcdefg/', '', 'a'.repeat(33)]) {
    assert.is(await storage.claim(token), false, token);
    assert.is(await storage.read(token), null, token);
  }
  assert.instance(await rejection(() => storage.write(makeProfile('../../etc'))), InvalidProfileError);
});

test('a token that is no string is never claimed, even one whose digits would read as hex', async () => {
  const storage = new MemoryStorage();
  assert.is(await storage.claim(123456 as unknown as string), false);
});

test('a profile whose summary fields are not of their types is refused with InvalidProfileError naming each, and not stored', async () => {
  const storage = new MemoryStorage();
  const bad = { ...makeProfile(tokenFor(1)), parent: 'nope', ip: 1, method: null, url: undefined, time: Number.POSITIVE_INFINITY, status: 200.5 } as unknown as Profile;
  const error = await rejection(() => storage.write(bad));
  assert.instance(error, InvalidProfileError);
  assert.is(error.message, `Profile ${tokenFor(1)} cannot be stored: parent must be null or a token, ip must be a string, method must be a string, url must be a string, time must be epoch milliseconds, status must be an integer.`);
  assert.is(await storage.read(tokenFor(1)), null);
  const timeNoNumber = await rejection(() => storage.write(makeProfile(tokenFor(2), { time: '1' as unknown as number })));
  assert.match(timeNoNumber.message, /: time must be epoch milliseconds\.$/);
  const child = makeProfile(tokenFor(3), { parent: tokenFor(1) });
  await storage.write(child);
  assert.ok(await storage.read(tokenFor(3)), 'a parent that is a token is fine');
  const longToken = await rejection(() => storage.write(makeProfile('x'.repeat(200))));
  assert.is(longToken.message, `Profile token must be 6 to 32 lowercase hex characters, got "${'x'.repeat(79)}.`, 'a long token is cut at 80 characters of its JSON');
  for (const value of [null, 'abcdef']) {
    const refused = await rejection(() => storage.write(value as unknown as Profile));
    assert.instance(refused, InvalidProfileError, String(value));
    assert.is(refused.message, 'A profile must be an object.');
  }
});

test('a claimed token cannot be claimed again until released', async () => {
  const storage = new MemoryStorage();
  assert.is(await storage.claim('abcdef'), true);
  assert.is(await storage.claim('abcdef'), false);
  await storage.release('abcdef');
  assert.is(await storage.claim('abcdef'), true);
});

test('a discarded token is not claimed again within the bounds: maxAge, and the newest maxProfiles of them', async () => {
  let now = BASE_TIME;
  const storage = new MemoryStorage({ now: () => now, bounds: { maxAge: 1_000, maxProfiles: 2 } });
  for (const token of ['aaaaaa', 'bbbbbb', 'cccccc']) {
    assert.is(await storage.claim(token), true);
    await storage.discard(token);
  }
  assert.is(await storage.claim('bbbbbb'), false, 'discarded: a client may hold a link with it');
  assert.is(await storage.claim('cccccc'), false);
  assert.is(await storage.claim('aaaaaa'), true, 'the oldest beyond maxProfiles is free again');
  now += 1_001;
  assert.is(await storage.claim('bbbbbb'), true, 'older than maxAge: free again');
  await storage.discard('dddddd');
  assert.is(await storage.claim('dddddd'), true, 'never claimed: nothing to discard');
});

test('write then read returns an equal profile that later changes to the original cannot reach', async () => {
  const storage = new MemoryStorage();
  const profile = makeProfile('abcdef');
  await storage.write(profile);
  profile.status = 500;
  const read = await storage.read('abcdef');
  assert.equal(read, { ...makeProfile('abcdef') });
  assert.is(await storage.claim('abcdef'), false, 'a stored token is taken');
});

test('a profile given as UTF-8 bytes is copied on write: the caller may reuse its buffer at once', async () => {
  const storage = new MemoryStorage();
  const profile = makeProfile(tokenFor(1), { url: 'http://h/élève' });
  const { collectors: _collectors, children: _children, ...summary } = profile;
  const bytes = Buffer.from(JSON.stringify(profile));
  await storage.write({ ...summary, json: bytes });
  bytes.fill(0x20);
  assert.equal(await storage.read(tokenFor(1)), profile);
});

test('a second write of a stored token rejects and keeps the first profile', async () => {
  const storage = new MemoryStorage();
  await storage.write(makeProfile('abcdef', { status: 200 }));
  assert.instance(await rejection(() => storage.write(makeProfile('abcdef', { status: 500 }))), ProfileExistsError);
  assert.is((await storage.read('abcdef'))?.status, 200);
});

test('writeMany saves every storable profile of a batch and rejects with the refusals afterwards', async () => {
  const storage = new MemoryStorage();
  await storage.writeMany([makeProfile(tokenFor(1), { time: BASE_TIME + 1 }), makeProfile(tokenFor(2), { time: BASE_TIME + 2 })]);
  assert.equal((await storage.find()).map((summary) => summary.token), [tokenFor(2), tokenFor(1)]);
  const single = await rejection(() => storage.writeMany([makeProfile(tokenFor(1), { status: 500 }), makeProfile(tokenFor(3))]));
  assert.instance(single, ProfileExistsError);
  assert.is((await storage.read(tokenFor(1)))?.status, 200);
  assert.ok(await storage.read(tokenFor(3)), 'the rest of the batch is saved');
  const several = await rejection(() => storage.writeMany([makeProfile(tokenFor(4)), makeProfile(tokenFor(4)), makeProfile('../x'), makeProfile(tokenFor(5))]));
  assert.instance(several, ProfileBatchError);
  assert.equal((several as ProfileBatchError).errors.map((error) => error.constructor), [ProfileExistsError, InvalidProfileError]);
  assert.ok(await storage.read(tokenFor(4)));
  assert.ok(await storage.read(tokenFor(5)));
  await storage.writeMany([]);
  assert.is((await storage.find({ limit: 100 })).length, 5);
});

test('a token twice in a batch is refused the second time, also when the bounds dropped the first at once', async () => {
  const storage = new MemoryStorage({ bounds: { maxProfiles: 1 } });
  await storage.write(makeProfile(tokenFor(1), { time: BASE_TIME }));
  const error = await rejection(() => storage.writeMany([makeProfile(tokenFor(2), { time: BASE_TIME - 1, status: 200 }), makeProfile(tokenFor(2), { time: BASE_TIME + 1, status: 500 })]));
  assert.instance(error, ProfileExistsError);
  assert.is(await storage.read(tokenFor(2)), null, 'the first, older than the one kept, went with the bound; the second was not saved in its place');
  const refusedFirst = await rejection(() => storage.writeMany([makeProfile(tokenFor(1), { status: 500 }), makeProfile(tokenFor(3), { time: BASE_TIME + 2 }), makeProfile(tokenFor(1), { status: 404 })]));
  assert.instance(refusedFirst, ProfileBatchError, 'refused as stored, then as twice in the batch, though the bound dropped the stored one meanwhile');
  assert.is(await storage.read(tokenFor(1)), null);
});

test('over the count bound an expired profile goes, not the one the bounds keep (dated ahead of the clock)', async () => {
  const now = BASE_TIME;
  const storage = new MemoryStorage({ bounds: { maxProfiles: 1, maxAge: 60_000 }, now: () => now });
  await storage.writeMany([makeProfile(tokenFor(1), { time: now - 60_001 }), makeProfile(tokenFor(2), { time: now + 120_000 })]);
  assert.equal((await storage.find()).map((summary) => summary.token), [tokenFor(2)]);
});

test('over the byte bound, a newest profile alone larger than the whole bound goes rather than those before it, as in FileStorage', async () => {
  const storage = new MemoryStorage({ bounds: { maxBytes: 10_000 } });
  await storage.write(makeProfile(tokenFor(1), { time: BASE_TIME }, 2_000));
  await storage.write(makeProfile(tokenFor(2), { time: BASE_TIME + 1 }, 20_000));
  assert.equal((await storage.find()).map((summary) => summary.token), [tokenFor(1)]);
  const alone = new MemoryStorage({ bounds: { maxBytes: 10_000 } });
  await alone.write(makeProfile(tokenFor(3), {}, 20_000));
  assert.equal((await alone.find()).map((summary) => summary.token), [tokenFor(3)], 'the last profile stays');
  const counted = new MemoryStorage({ bounds: { maxBytes: 10_000, maxProfiles: 1 } });
  await counted.writeMany([makeProfile(tokenFor(4), { time: BASE_TIME }, 2_000), makeProfile(tokenFor(5), { time: BASE_TIME + 1 }, 20_000)]);
  assert.equal((await counted.find()).map((summary) => summary.token), [tokenFor(5)], 'the count bound first: the oldest goes, and the newest is then alone');
});

test('a url search finds a non-ASCII path written as the user reads it (`élève`) or as the URL holds it (`%C3%A9l%C3%A8ve`)', () => checkNonAsciiUrlSearch(new MemoryStorage()));

test('a url search finds an escape in either case of hex, and a space sent as a form sends it in a query (+)', async () => {
  const storage = new MemoryStorage();
  await storage.write(makeProfile(tokenFor(1), { time: BASE_TIME + 1, url: 'http://h/users/%c3%a9l%c3%a8ve' }));
  await storage.write(makeProfile(tokenFor(2), { time: BASE_TIME + 2, url: 'http://h/search?q=caf%C3%A9+cr%C3%A8me' }));
  await storage.write(makeProfile(tokenFor(3), { time: BASE_TIME + 3, url: 'http://h/p/100%25/a+b' }));
  const tokens = async (url: string) => (await storage.find({ url })).map((summary) => summary.token);
  assert.equal(await tokens('élève'), [tokenFor(1)], 'a client that writes lower-case hex');
  assert.equal(await tokens('%C3%A9l%C3%A8ve'), [tokenFor(1)], 'upper-case typed, lower-case held');
  assert.equal(await tokens('%c3%a9'), [tokenFor(2), tokenFor(1)], 'lower-case typed, upper-case held');
  assert.equal(await tokens('café crème'), [tokenFor(2)], 'a form\'s query writes a space +');
  assert.equal(await tokens('100%'), [tokenFor(3)], 'a % typed is no escape');
  assert.equal(await tokens('a+b'), [tokenFor(3)]);
  assert.equal(await tokens('.*'), [], 'no pattern');
});

test('find filters and lists newest first, at most limit', async () => {
  const storage = new MemoryStorage();
  await storage.write(makeProfile(tokenFor(1), { time: BASE_TIME + 1, method: 'POST', status: 201, ip: '10.0.0.1', url: 'http://h/books' }));
  await storage.write(makeProfile(tokenFor(3), { time: BASE_TIME + 3, method: 'GET', status: 404, ip: '10.0.0.2', url: 'http://h/missing' }));
  await storage.write(makeProfile(tokenFor(2), { time: BASE_TIME + 2, method: 'GET', status: 200, ip: '10.0.0.1', url: 'http://h/books/1' }));
  const tokens = async (criteria: object) => (await storage.find(criteria)).map((summary) => summary.token);
  assert.equal(await tokens({}), [tokenFor(3), tokenFor(2), tokenFor(1)]);
  assert.equal(await tokens({ method: 'post' }), [tokenFor(1)]);
  assert.equal(await tokens({ ip: '10.0.0.1' }), [tokenFor(2), tokenFor(1)]);
  assert.equal(await tokens({ status: 404 }), [tokenFor(3)]);
  assert.equal(await tokens({ url: '/books' }), [tokenFor(2), tokenFor(1)]);
  assert.equal(await tokens({ start: BASE_TIME + 2, end: BASE_TIME + 3 }), [tokenFor(3), tokenFor(2)]);
  assert.equal(await tokens({ limit: 1 }), [tokenFor(3)]);
  assert.equal(Object.keys((await storage.find({ limit: 1 }))[0] ?? {}).sort(), ['ip', 'method', 'parent', 'status', 'time', 'token', 'url']);
});

test('start and end are inclusive bounds: a profile after the end or before the start is left out', async () => {
  const storage = new MemoryStorage();
  for (const n of [1, 2, 3]) await storage.write(makeProfile(tokenFor(n), { time: BASE_TIME + n }));
  const tokens = async (criteria: object) => (await storage.find(criteria)).map((summary) => summary.token);
  assert.equal(await tokens({ end: BASE_TIME + 2 }), [tokenFor(2), tokenFor(1)]);
  assert.equal(await tokens({ start: BASE_TIME + 2 }), [tokenFor(3), tokenFor(2)]);
  assert.equal(await tokens({ start: BASE_TIME + 2, end: BASE_TIME + 2 }), [tokenFor(2)]);
});

test('a url search finds an escape whose second hex digit is a letter in either case (ë, %C3%AB), and a character outside the BMP (an emoji, four bytes)', async () => {
  const storage = new MemoryStorage();
  await storage.write(makeProfile(tokenFor(1), { time: BASE_TIME + 1, url: 'http://h/no%C3%ABl' }));
  await storage.write(makeProfile(tokenFor(2), { time: BASE_TIME + 2, url: 'http://h/no%c3%abl' }));
  await storage.write(makeProfile(tokenFor(3), { time: BASE_TIME + 3, url: 'http://h/tags/%F0%9F%98%80' }));
  const tokens = async (url: string) => (await storage.find({ url })).map((summary) => summary.token);
  assert.equal(await tokens('noël'), [tokenFor(2), tokenFor(1)]);
  assert.equal(await tokens('😀'), [tokenFor(3)]);
});

test('maxProfiles evicts the oldest profiles first', async () => {
  const storage = new MemoryStorage({ bounds: { maxProfiles: 3 } });
  for (let i = 0; i < 5; i++) await storage.write(makeProfile(tokenFor(i), { time: BASE_TIME + i }));
  assert.equal((await storage.find()).map((summary) => summary.token), [tokenFor(4), tokenFor(3), tokenFor(2)]);
  assert.is(await storage.read(tokenFor(0)), null);
});

test('after the clock is set back, a profile written is kept over one dated in the clock\'s future', async () => {
  let now = BASE_TIME + 3_600_000;
  const storage = new MemoryStorage({ bounds: { maxProfiles: 3 }, now: () => now });
  for (let i = 0; i < 3; i++) await storage.write(makeProfile(tokenFor(i), { time: now + i }));
  now = BASE_TIME;
  await storage.write(makeProfile(tokenFor(9), { time: now }));
  assert.ok(await storage.read(tokenFor(9)), 'the profile just written is kept');
  assert.ok(await storage.read(tokenFor(0)), 'the future-dated ones go furthest first');
  assert.is(await storage.read(tokenFor(2)), null);
});

test('maxAge hides and drops profiles older than the injected clock allows', async () => {
  let now = BASE_TIME;
  const storage = new MemoryStorage({ bounds: { maxAge: 1_000 }, now: () => now });
  await storage.write(makeProfile(tokenFor(1), { time: BASE_TIME }));
  await storage.write(makeProfile(tokenFor(2), { time: BASE_TIME + 800 }));
  now = BASE_TIME + 1_500;
  assert.equal((await storage.find()).map((summary) => summary.token), [tokenFor(2)]);
  assert.is(await storage.read(tokenFor(1)), null);
});

test('maxBytes counts JSON length and evicts the oldest, never the newest', async () => {
  const size = JSON.stringify(makeProfile(tokenFor(0))).length;
  const storage = new MemoryStorage({ bounds: { maxBytes: size * 2 + 10 } });
  for (let i = 0; i < 4; i++) await storage.write(makeProfile(tokenFor(i), { time: BASE_TIME + i }));
  assert.equal((await storage.find()).map((summary) => summary.token), [tokenFor(3), tokenFor(2)]);
  const tiny = new MemoryStorage({ bounds: { maxBytes: 10 } });
  await tiny.write(makeProfile(tokenFor(9)));
  assert.ok(await tiny.read(tokenFor(9)), 'a profile alone over maxBytes is still kept');
});

test('a profile exactly maxAge old is kept, one a millisecond older goes, and a discarded token exactly maxAge old is still not drawn', async () => {
  let now = BASE_TIME;
  const storage = new MemoryStorage({ bounds: { maxAge: 1_000 }, now: () => now });
  await storage.write(makeProfile(tokenFor(1), { time: BASE_TIME }));
  assert.is(await storage.claim('abcdef'), true);
  await storage.discard('abcdef');
  now = BASE_TIME + 1_000;
  assert.ok(await storage.read(tokenFor(1)), 'exactly maxAge old');
  assert.is(await storage.claim('abcdef'), false, 'discarded exactly maxAge ago');
  now += 1;
  assert.is(await storage.read(tokenFor(1)), null);
  assert.is(await storage.claim('abcdef'), true);
});

test('at maxBytes exactly nothing goes', async () => {
  const sizes = [1, 2].map((n) => JSON.stringify(makeProfile(tokenFor(n), { time: BASE_TIME + n })).length);
  const storage = new MemoryStorage({ bounds: { maxBytes: sizes[0]! + sizes[1]! } });
  for (const n of [1, 2]) await storage.write(makeProfile(tokenFor(n), { time: BASE_TIME + n }));
  assert.equal((await storage.find()).map((summary) => summary.token), [tokenFor(2), tokenFor(1)]);
});

test('over the count bound the oldest goes, also when the newest is dated ahead of the clock by FUTURE_SLACK_MS exactly, not more', async () => {
  const now = BASE_TIME;
  const storage = new MemoryStorage({ bounds: { maxProfiles: 2 }, now: () => now });
  await storage.writeMany([makeProfile(tokenFor(1), { time: now - 2 }), makeProfile(tokenFor(2), { time: now - 1 }), makeProfile(tokenFor(3), { time: now + 60_000 })]);
  assert.equal((await storage.find()).map((summary) => summary.token), [tokenFor(3), tokenFor(2)]);
});

test('a profile of maxBytes exactly is within the byte bound alone: newest, it stays; older, a newest one over the bound goes rather than it', async () => {
  const size = JSON.stringify(makeProfile(tokenFor(2), { time: BASE_TIME + 2 }, 4_000)).length;
  const atBound = new MemoryStorage({ bounds: { maxBytes: size } });
  await atBound.write(makeProfile(tokenFor(1), { time: BASE_TIME + 1 }));
  await atBound.write(makeProfile(tokenFor(2), { time: BASE_TIME + 2 }, 4_000));
  assert.equal((await atBound.find()).map((summary) => summary.token), [tokenFor(2)], 'the oldest went');
  const older = new MemoryStorage({ bounds: { maxBytes: size } });
  await older.write(makeProfile(tokenFor(2), { time: BASE_TIME + 2 }, 4_000));
  await older.write(makeProfile(tokenFor(3), { time: BASE_TIME + 3 }, 8_000));
  assert.equal((await older.find()).map((summary) => summary.token), [tokenFor(2)], 'the newest, alone over the bound, went');
});

test('over the byte bound, when every profile is alone over it, the newest stays', async () => {
  const storage = new MemoryStorage({ bounds: { maxBytes: 10_000 } });
  await storage.write(makeProfile(tokenFor(1), { time: BASE_TIME + 1 }, 20_000));
  await storage.write(makeProfile(tokenFor(2), { time: BASE_TIME + 2 }, 20_000));
  assert.equal((await storage.find()).map((summary) => summary.token), [tokenFor(2)]);
});

test('at the count bound exactly, a newest profile alone over the byte bound goes rather than the oldest', async () => {
  const storage = new MemoryStorage({ bounds: { maxBytes: 10_000, maxProfiles: 2 } });
  await storage.write(makeProfile(tokenFor(1), { time: BASE_TIME + 1 }, 2_000));
  await storage.write(makeProfile(tokenFor(2), { time: BASE_TIME + 2 }, 20_000));
  assert.equal((await storage.find()).map((summary) => summary.token), [tokenFor(1)]);
});

test('a profile JSON cannot write is refused with InvalidProfileError saying why, and not stored', async () => {
  const storage = new MemoryStorage();
  const error = await rejection(() => storage.write(makeProfile(tokenFor(1), { collectors: { custom: { n: 1n } } })));
  assert.instance(error, InvalidProfileError);
  assert.match(error.message, new RegExp(`^Profile ${tokenFor(1)} cannot be serialised to JSON: .*BigInt`));
  assert.is(await storage.read(tokenFor(1)), null);
});

test('purge removes every profile', async () => {
  const storage = new MemoryStorage();
  await storage.write(makeProfile('abcdef'));
  await storage.purge();
  assert.is(await storage.read('abcdef'), null);
  assert.equal(await storage.find(), []);
});

test('bounds that are not numbers above 0 are refused at construction', () => {
  assert.throws(() => new MemoryStorage({ bounds: { maxProfiles: 0 } }), /maxProfiles must be a finite number of profiles above 0, got number 0\./);
  assert.throws(() => new MemoryStorage({ bounds: { maxAge: Number.NaN } }), /maxAge/);
  // A string compares above 0 ('5' > 0): refused all the same, as no number.
  assert.throws(() => new MemoryStorage({ bounds: { maxBytes: '5' as unknown as number } }), (error: unknown) => error instanceof RangeError && /maxBytes must be a finite number of bytes above 0, got the string "5"\./.test(error.message));
});

test('bounds left out are the README\'s defaults: 2 days, 10,000 profiles, 512 MiB; those given are kept beside them', () => {
  assert.equal({ ...new MemoryStorage().bounds }, { maxAge: 2 * 86_400_000, maxProfiles: 10_000, maxBytes: 512 * 1024 * 1024 });
  assert.equal({ ...new MemoryStorage({ bounds: { maxProfiles: 3 } }).bounds }, { maxAge: 2 * 86_400_000, maxProfiles: 3, maxBytes: 512 * 1024 * 1024 });
});

test.run();
