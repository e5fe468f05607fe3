export * from './bus.js';
export * from './debug-log-buffer.js';
export * from './log-record.js';
export * from './logger.js';
export * from './request-description.js';
export * from './stderr-sink.js';
