export * from './create-kernel.js';
export * from './describe-request.js';
export * from './environment.js';
export * from './reference-app.js';
