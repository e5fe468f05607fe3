export * from './errors.js';
export * from './file-storage.js';
export * from './memory-storage.js';
export * from './profiler-storage.js';
export * from './threaded-file-storage.js';
