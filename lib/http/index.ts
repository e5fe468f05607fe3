export * from './disallow-robots-indexing-listener.js';
export * from './response-listener.js';
export * from './validate-host-listener.js';
