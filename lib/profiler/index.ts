export * from './access-listener.js';
export * from './collectors/index.js';
export * from './data-collector.js';
export * from './debug-access.js';
// The helpers the built-in collectors write their RawJson with (flat() is theirs alone).
export { jsonNumber, jsonString, jsonStringOrNull, jsonValue } from './json.js';
export * from './profile.js';
export * from './profiler.js';
export * from './profiler-controller.js';
export * from './redactor.js';
export * from './routes.js';
export * from './storage/index.js';
export { DEFAULT_TOKEN_LENGTH, MAX_TOKEN_LENGTH, MIN_TOKEN_LENGTH, TokenPool, generateToken, isTokenLength, isValidToken } from './token.js';
export * from './toolbar-listener.js';
export * from './ui/index.js';
