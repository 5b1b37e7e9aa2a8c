export { CadreError } from './cadre-error.ts';
export { ConfigError } from './config-error.ts';
export { NotFoundError, type NotFoundKind } from './not-found-error.ts';
