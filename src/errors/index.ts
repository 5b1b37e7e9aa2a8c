export { CadreError } from './cadre-error.ts';
export { ConfigError } from './config-error.ts';
