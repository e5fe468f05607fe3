export * from './events-collector.js';
export * from './exception-collector.js';
export * from './logger-collector.js';
export * from './memory-collector.js';
export * from './request-collector.js';
export * from './router-collector.js';
