/**
 * The environment names that mean production: there, debug is off unless asked for (`bin/serve`)
 * and responses carry no `X-Robots-Tag: noindex` (createKernel).
 */
export const PRODUCTION_ENVIRONMENTS: readonly string[] = Object.freeze(['prod', 'production']);

/**
 * Whether `env` names production (`prod` or `production`, in any case, spaces around ignored): a
 * slip in `APP_ENV=PROD` must not turn debug mode on in production.
 */
export function isProductionEnvironment(env: string): boolean {
  return PRODUCTION_ENVIRONMENTS.includes(env.trim().toLowerCase());
}
