/**
 * Imported first by each of cadre's entry points, so that an unsupported Node stops with one
 * clear line (an `UnsupportedNodeError`) before anything else of cadre runs.
 * @module
 */
import { CadreError } from '../errors/cadre-error.ts';
import { unsupportedNodeMessage } from './node-support.ts';

const message = unsupportedNodeMessage();
if (message !== undefined) throw new CadreError('UnsupportedNodeError', message);
