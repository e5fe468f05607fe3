export * from './create-kernel.js';
export * from './environment.js';
export * from './reference-app.js';
