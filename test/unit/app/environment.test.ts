import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { Request } from '../../../kernel/index.js';
import { PRODUCTION_ENVIRONMENTS, createApp, isProductionEnvironment } from '../../../lib/app/index.js';
import { SERVE_DEFAULTS } from '../../../lib/server/serve-options.js';

async function robotsTag(env: string): Promise<string | undefined> {
  const app = createApp({ env, debug: false, stderrLogLevel: false });
  try {
    const response = await app.kernel.handle(Request.create('/health'));
    return response.headers['x-robots-tag'] as string | undefined;
  } finally {
    await app.close();
  }
}

test('prod and production name production, in any case and with spaces around (a slip must not turn debug on); other names do not', () => {
  assert.equal([...PRODUCTION_ENVIRONMENTS], ['prod', 'production']);
  for (const env of ['prod', 'production', 'Production', 'PROD', 'prod ', ' production']) assert.ok(isProductionEnvironment(env), env);
  for (const env of ['staging', 'dev', 'test', 'preprod', 'production-eu', '']) assert.not.ok(isProductionEnvironment(env), env);
});

test('responses carry X-Robots-Tag: noindex outside prod and production only', async () => {
  assert.is(await robotsTag('staging'), 'noindex');
  assert.is(await robotsTag('dev'), 'noindex');
  assert.is(await robotsTag('prod'), undefined);
  assert.is(await robotsTag('production'), undefined);
});

test('bin/serve turns debug off in the same environments', () => {
  assert.is(SERVE_DEFAULTS.debugOffIn, PRODUCTION_ENVIRONMENTS);
});

test.run();
