export * from './errors.js';
export * from './memory-storage.js';
export * from './profiler-storage.js';
