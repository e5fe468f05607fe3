export * from './create-kernel.js';
export * from './reference-app.js';
