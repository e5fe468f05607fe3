export { DEFAULT_LIMITS, answersExpectContinue, answersResponseTimeout, hearsRefusals, startServers, type Limits, type ListenOptions, type Refusal, type RequestListener, type RunningServers } from './listen.js';
export { createInjector, type Inject, type InjectInit, type InjectedResponse, type InjectorOptions } from './inject.js';
export { createRequestListener, send, type KernelRequestListener, type NodeRequestListener, type RequestListenerOptions } from './node-adapter.js';
export { SERVE_DEFAULTS, UsageError, formatServeHelp, parseServeOptions, type ServeOptions } from './serve-options.js';
export { DEV_CERTIFICATE_NAMES, TlsCertificateError, loadCertificateFiles, loadOrCreateDevCertificate, type CertificateFiles, type CertificateValidityProblem, type DevCertificate, type KeyModeChange, type TlsCredentials } from './tls-certificate.js';
export { DEBUG_YOUNG_GENERATION_BYTES, capYoungGeneration, youngGenerationBytes } from './young-generation.js';
