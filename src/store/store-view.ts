import type { Store } from './store.ts';

/** The methods of a {@link StoreView}: what reads the store, and its lifecycle. */
const viewed = [
  'getSession',
  'listSessions',
  'getSessionUsage',
  'listMessages',
  'getRun',
  'listRuns',
  'listRunEvents',
  'getApproval',
  'listApprovals',
  'listSessionRules',
  'getWorkflow',
  'listWorkflows',
  'flush',
  'close',
] as const;

/**
 * A read-only view of a store: its reads, `flush` and `close`, and nothing that writes. What an
 * application gets as `Cadre.store`: runs move only through the runtime (the ledger's legal moves),
 * never by a `transitionRun` or `claimRun` of an application's.
 */
export type StoreView = Pick<Store, (typeof viewed)[number] | 'description' | 'files' | 'externalVersion' | 'onFailure'>;

/** The {@link StoreView} of a store: an object with only those members, bound to it. */
export function storeView(store: Store): StoreView {
  const view: Record<string, unknown> = { description: store.description, files: store.files };
  for (const name of viewed) view[name] = store[name].bind(store);
  if (store.externalVersion) view.externalVersion = store.externalVersion.bind(store);
  if (store.onFailure) view.onFailure = store.onFailure.bind(store);
  return view as unknown as StoreView;
}
